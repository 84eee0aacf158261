// ACLs in the metadata store exactly as Kafka's ZooKeeper authorizer (AclAuthorizer) keeps them, so that an
// operator's existing tooling reads Brook's tree:
//
//   /kafka-acl/<ResourceType>/<name>                      literal patterns ("Topic", "Group", "TransactionalId")
//   /kafka-acl-extended/prefixed/<ResourceType>/<name>    prefixed patterns
//   {"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}
//
// After each change a sequential notification names the resource that changed; every broker watches them:
//
//   /kafka-acl-changes/acl_changes_<seq>            "TOPIC:orders" (a literal pattern: type, colon, name)
//   /kafka-acl-extended-changes/acl_changes_<seq>   {"version":1,"resourceType":"TOPIC","name":"ord","patternType":"PREFIXED"}

import {
  type AclEntry,
  operationName,
  PatternType,
  parseOperation,
  parsePatternType,
  parsePermission,
  parseResourceType,
  patternTypeEnumName,
  permissionName,
  type ResourcePattern,
  resourceTypeEnumName,
  resourceTypeName,
} from './acl-types.js';

export const LITERAL_ACL_PATH = '/kafka-acl';
export const EXTENDED_ACL_PATH = '/kafka-acl-extended';
export const PREFIXED_ACL_PATH = '/kafka-acl-extended/prefixed';
export const LITERAL_CHANGES_PATH = '/kafka-acl-changes';
export const EXTENDED_CHANGES_PATH = '/kafka-acl-extended-changes';
export const CHANGE_PREFIX = 'acl_changes_';

/** The directory holding one pattern type's resources of one resource type. */
export function aclTypePath(patternType: number, resourceType: number): string {
  const root = patternType === PatternType.PREFIXED ? PREFIXED_ACL_PATH : LITERAL_ACL_PATH;
  return `${root}/${resourceTypeName(resourceType)}`;
}

export function aclNodePath(pattern: ResourcePattern): string {
  return `${aclTypePath(pattern.patternType, pattern.resourceType)}/${pattern.name}`;
}

export function changesPathFor(pattern: ResourcePattern): string {
  return pattern.patternType === PatternType.PREFIXED ? EXTENDED_CHANGES_PATH : LITERAL_CHANGES_PATH;
}

interface AclJson {
  principal: string;
  permissionType: string;
  operation: string;
  host: string;
}

export function encodeAcls(entries: readonly AclEntry[]): Uint8Array {
  const acls: AclJson[] = entries.map((e) => ({
    principal: e.principal,
    permissionType: permissionName(e.permissionType),
    operation: operationName(e.operation),
    host: e.host,
  }));
  return Buffer.from(JSON.stringify({ version: 1, acls }), 'utf8');
}

/** The entries of a resource node; unreadable entries are left out (and named in `bad`). */
export function decodeAcls(data: Uint8Array): { entries: AclEntry[]; bad: number } {
  if (data.length === 0) return { entries: [], bad: 0 };
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    return { entries: [], bad: 1 };
  }
  const acls = (doc as { acls?: unknown }).acls;
  if (!Array.isArray(acls)) return { entries: [], bad: 1 };
  const entries: AclEntry[] = [];
  let bad = 0;
  for (const raw of acls as Partial<AclJson>[]) {
    const operation = typeof raw.operation === 'string' ? parseOperation(raw.operation) : null;
    const permissionType =
      typeof raw.permissionType === 'string' ? parsePermission(raw.permissionType) : null;
    if (
      operation === null ||
      permissionType === null ||
      typeof raw.principal !== 'string' ||
      typeof raw.host !== 'string'
    ) {
      bad++;
      continue;
    }
    entries.push({ principal: raw.principal, host: raw.host, operation, permissionType });
  }
  return { entries, bad };
}

export function encodeChange(pattern: ResourcePattern): Uint8Array {
  if (pattern.patternType === PatternType.LITERAL) {
    return Buffer.from(`${resourceTypeEnumName(pattern.resourceType)}:${pattern.name}`, 'utf8');
  }
  return Buffer.from(
    JSON.stringify({
      version: 1,
      resourceType: resourceTypeEnumName(pattern.resourceType),
      name: pattern.name,
      patternType: patternTypeEnumName(pattern.patternType),
    }),
    'utf8',
  );
}

/** The resource a notification names, or null when it cannot be read. */
export function decodeChange(changesPath: string, data: Uint8Array): ResourcePattern | null {
  const text = Buffer.from(data).toString('utf8');
  if (changesPath === LITERAL_CHANGES_PATH) {
    const colon = text.indexOf(':');
    if (colon <= 0) return null;
    const resourceType = parseResourceType(text.slice(0, colon));
    if (resourceType === null) return null;
    return { resourceType, name: text.slice(colon + 1), patternType: PatternType.LITERAL };
  }
  try {
    const doc = JSON.parse(text) as { resourceType?: unknown; name?: unknown; patternType?: unknown };
    if (
      typeof doc.resourceType !== 'string' ||
      typeof doc.name !== 'string' ||
      typeof doc.patternType !== 'string'
    )
      return null;
    const resourceType = parseResourceType(doc.resourceType);
    const patternType = parsePatternType(doc.patternType);
    if (resourceType === null || patternType === null) return null;
    return { resourceType, name: doc.name, patternType };
  } catch {
    return null;
  }
}
