// Kafka's ACL vocabulary: resource types, pattern types, operations and permission types with their wire codes
// (org.apache.kafka.common.acl / .resource), the names Kafka writes in ZooKeeper, and the names kafka-acls.sh
// accepts. The codes are what CreateAcls, DescribeAcls and DeleteAcls carry; nothing here depends on the wire.

export const ResourceType = {
  UNKNOWN: 0,
  ANY: 1,
  TOPIC: 2,
  GROUP: 3,
  CLUSTER: 4,
  TRANSACTIONAL_ID: 5,
  DELEGATION_TOKEN: 6,
  USER: 7,
} as const;
export type ResourceTypeCode = (typeof ResourceType)[keyof typeof ResourceType];

export const PatternType = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const;
export type PatternTypeCode = (typeof PatternType)[keyof typeof PatternType];

export const AclOperation = {
  UNKNOWN: 0,
  ANY: 1,
  ALL: 2,
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
  CREATE_TOKENS: 13,
  DESCRIBE_TOKENS: 14,
} as const;
export type AclOperationCode = (typeof AclOperation)[keyof typeof AclOperation];

export const PermissionType = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const;
export type PermissionTypeCode = (typeof PermissionType)[keyof typeof PermissionType];

/** The only name a CLUSTER resource has. */
export const CLUSTER_RESOURCE_NAME = 'kafka-cluster';
/** A literal resource named "*" matches every resource of its type; a principal "User:*" every principal. */
export const WILDCARD_RESOURCE = '*';
export const WILDCARD_PRINCIPAL = 'User:*';
export const WILDCARD_HOST = '*';

/** A resource pattern as ACLs are attached to it: (type, name, LITERAL or PREFIXED). */
export interface ResourcePattern {
  readonly resourceType: number;
  readonly name: string;
  readonly patternType: number;
}

/** One access control entry of a resource pattern. */
export interface AclEntry {
  readonly principal: string;
  readonly host: string;
  readonly operation: number;
  readonly permissionType: number;
}

export interface AclBinding {
  readonly pattern: ResourcePattern;
  readonly entry: AclEntry;
}

/** DescribeAcls / DeleteAcls filter: null strings and ANY codes match everything. */
export interface AclBindingFilter {
  readonly resourceType: number;
  readonly name: string | null;
  readonly patternType: number;
  readonly principal: string | null;
  readonly host: string | null;
  readonly operation: number;
  readonly permissionType: number;
}

/** Upper-case enum name by code, for one of the tables above. */
function nameOf(table: Readonly<Record<string, number>>, code: number): string {
  for (const [name, value] of Object.entries(table)) if (value === code) return name;
  return 'UNKNOWN';
}

/** "TRANSACTIONAL_ID" -> "TransactionalId": Kafka's SecurityUtils names in ZooKeeper paths and JSON. */
function pascal(upper: string): string {
  return upper
    .split('_')
    .map((w) => w.charAt(0) + w.slice(1).toLowerCase())
    .join('');
}

export const resourceTypeEnumName = (code: number): string => nameOf(ResourceType, code);
export const patternTypeEnumName = (code: number): string => nameOf(PatternType, code);
export const operationEnumName = (code: number): string => nameOf(AclOperation, code);
export const permissionEnumName = (code: number): string => nameOf(PermissionType, code);

/** "Topic", "TransactionalId": the znode segment under /kafka-acl. */
export const resourceTypeName = (code: number): string => pascal(resourceTypeEnumName(code));
/** "Read", "ClusterAction": the operation as Kafka's ACL JSON and kafka-acls.sh write it. */
export const operationName = (code: number): string => pascal(operationEnumName(code));
/** "Allow", "Deny". */
export const permissionName = (code: number): string => pascal(permissionEnumName(code));

/** Case-insensitive, with or without underscores ("ClusterAction", "CLUSTER_ACTION", "cluster_action"). */
function parseName(table: Readonly<Record<string, number>>, text: string): number | null {
  const wanted = text.replace(/_/g, '').toUpperCase();
  for (const [name, value] of Object.entries(table)) if (name.replace(/_/g, '') === wanted) return value;
  return null;
}

export const parseResourceType = (text: string): number | null => parseName(ResourceType, text);
export const parsePatternType = (text: string): number | null => parseName(PatternType, text);
export const parseOperation = (text: string): number | null => parseName(AclOperation, text);
export const parsePermission = (text: string): number | null => parseName(PermissionType, text);

/** Resource types that ACLs can be stored for (not UNKNOWN, ANY). */
export const STORABLE_RESOURCE_TYPES: readonly number[] = [
  ResourceType.TOPIC,
  ResourceType.GROUP,
  ResourceType.CLUSTER,
  ResourceType.TRANSACTIONAL_ID,
  ResourceType.DELEGATION_TOKEN,
  ResourceType.USER,
];

/** "Topic:LITERAL:orders", as Kafka's authorizer log prints a resource. */
export function describePattern(pattern: ResourcePattern): string {
  return `${resourceTypeName(pattern.resourceType)}:${patternTypeEnumName(pattern.patternType)}:${pattern.name}`;
}

export function patternKey(pattern: ResourcePattern): string {
  return `${pattern.resourceType}|${pattern.patternType}|${pattern.name}`;
}

export function sameEntry(a: AclEntry, b: AclEntry): boolean {
  return (
    a.principal === b.principal &&
    a.host === b.host &&
    a.operation === b.operation &&
    a.permissionType === b.permissionType
  );
}
