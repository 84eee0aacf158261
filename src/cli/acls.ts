// `brook acls`: Kafka's kafka-acls.sh against the broker's ACL authorizer, through CreateAcls, DescribeAcls and
// DeleteAcls. The same flags and output:
//
//   --add --allow-principal User:alice --operation Read --topic orders --group billing
//   --add --producer --allow-principal User:app --topic orders [--transactional-id tx --idempotent]
//   --add --consumer --allow-principal User:app --topic orders --group billing
//   --list [--topic orders] [--principal User:alice] [--resource-pattern-type match]
//   --remove --force --allow-principal User:alice --operation Read --topic orders
//
// --resource-pattern-type is literal (the default) or prefixed for --add; any and match also filter for --list
// and --remove. --remove without --force asks on stdin, as Kafka's tool does.

import { createInterface } from 'node:readline';
import { Admin } from '../client/admin.js';
import {
  type AclBinding,
  type AclBindingFilter,
  type AclEntry,
  AclOperation,
  CLUSTER_RESOURCE_NAME,
  operationEnumName,
  PatternType,
  PermissionType,
  parseOperation,
  parsePatternType,
  patternKey,
  patternTypeEnumName,
  permissionEnumName,
  type ResourcePattern,
  ResourceType,
  resourceTypeEnumName,
} from '../security/authorizer/acl-types.js';
import { type ParsedArgs, UsageError } from './args.js';
import { clientOptions, err, newClient, out, runTool, type Tool } from './client-tool.js';

const tool: Tool = {
  name: 'acls',
  summary: 'Add, list or remove ACLs (kafka-acls).',
  specs: {
    add: { help: 'Indicates you are trying to add ACLs.' },
    remove: { help: 'Indicates you are trying to remove ACLs.' },
    list: {
      help: 'List ACLs for the specified resource, use --topic <topic> or --group <group> or --cluster.',
    },
    'allow-principal': { value: true, repeat: true, help: 'Principal (User:name) the ALLOW ACLs are for.' },
    'deny-principal': { value: true, repeat: true, help: 'Principal (User:name) the DENY ACLs are for.' },
    'allow-host': { value: true, repeat: true, help: 'Host the ALLOW ACLs are for (default *).' },
    'deny-host': { value: true, repeat: true, help: 'Host the DENY ACLs are for (default *).' },
    principal: { value: true, repeat: true, help: 'With --list, only ACLs of this principal.' },
    operation: {
      value: true,
      repeat: true,
      help: 'Read, Write, Create, Delete, Alter, Describe, ClusterAction, AlterConfigs, DescribeConfigs, IdempotentWrite, All (default All).',
    },
    topic: { value: true, repeat: true, help: 'Topic resource; * for all topics.' },
    group: { value: true, repeat: true, help: 'Consumer group resource; * for all groups.' },
    cluster: { help: 'The cluster resource.' },
    'transactional-id': { value: true, repeat: true, help: 'Transactional id resource; * for all.' },
    'delegation-token': { value: true, repeat: true, help: 'Delegation token resource; * for all.' },
    'user-principal': { value: true, repeat: true, help: 'User resource (for token ACLs).' },
    'resource-pattern-type': {
      value: true,
      help: 'literal (default) or prefixed; with --list and --remove also any or match.',
    },
    producer: {
      help: 'Convenience: WRITE, DESCRIBE and CREATE on the topics (WRITE, DESCRIBE on transactional ids).',
    },
    consumer: { help: 'Convenience: READ and DESCRIBE on the topics, READ on the groups.' },
    idempotent: { help: 'With --producer, IDEMPOTENT_WRITE on the cluster.' },
    force: { help: 'Assume yes to all queries and do not prompt.' },
  },
  run,
};

export function runAcls(args: string[]): Promise<number> {
  return runTool(tool, args);
}

/** The operations each resource type accepts, as Kafka's AclCommand checks them. */
const SUPPORTED: Record<number, readonly number[]> = {
  [ResourceType.TOPIC]: [3, 4, 5, 6, 7, 8, 10, 11, 2],
  [ResourceType.GROUP]: [3, 8, 6, 2],
  [ResourceType.CLUSTER]: [5, 9, 10, 11, 12, 7, 8, 2],
  [ResourceType.TRANSACTIONAL_ID]: [8, 4, 2],
  [ResourceType.DELEGATION_TOKEN]: [8, 2],
  [ResourceType.USER]: [13, 14, 2],
};

function patternTypeOf(args: ParsedArgs, adding: boolean): number {
  const text = args.get('resource-pattern-type') ?? 'literal';
  const code = parsePatternType(text);
  if (code === null || code === PatternType.UNKNOWN)
    throw new UsageError(`unknown --resource-pattern-type '${text}'`);
  if (adding && code !== PatternType.LITERAL && code !== PatternType.PREFIXED) {
    throw new UsageError(`A '--resource-pattern-type' value of '${text}' is not valid when adding acls.`);
  }
  return code;
}

function resources(args: ParsedArgs, patternType: number): ResourcePattern[] {
  const out: ResourcePattern[] = [];
  const add = (resourceType: number, names: string[]) => {
    for (const name of names) out.push({ resourceType, name, patternType });
  };
  add(ResourceType.TOPIC, args.all('topic'));
  add(ResourceType.GROUP, args.all('group'));
  add(ResourceType.TRANSACTIONAL_ID, args.all('transactional-id'));
  add(ResourceType.DELEGATION_TOKEN, args.all('delegation-token'));
  add(ResourceType.USER, args.all('user-principal'));
  if (args.has('cluster'))
    out.push({ resourceType: ResourceType.CLUSTER, name: CLUSTER_RESOURCE_NAME, patternType });
  return out;
}

function operations(args: ParsedArgs): number[] {
  const names = args.all('operation');
  if (names.length === 0) return [AclOperation.ALL];
  return names.map((name) => {
    const code = parseOperation(name);
    if (code === null || code < AclOperation.ALL) throw new UsageError(`unknown --operation '${name}'`);
    return code;
  });
}

/** (principal, host, permission) triples from --allow-/--deny-principal and their hosts. */
function principals(args: ParsedArgs): { principal: string; host: string; permissionType: number }[] {
  const out: { principal: string; host: string; permissionType: number }[] = [];
  for (const [kind, permissionType] of [
    ['allow', PermissionType.ALLOW],
    ['deny', PermissionType.DENY],
  ] as const) {
    const hosts = args.all(`${kind}-host`);
    for (const principal of args.all(`${kind}-principal`)) {
      if (!/^[^:]+:.+$/.test(principal))
        throw new UsageError(`principal '${principal}' is not of the form Type:name`);
      for (const host of hosts.length === 0 ? ['*'] : hosts) out.push({ principal, host, permissionType });
    }
    if (hosts.length > 0 && args.all(`${kind}-principal`).length === 0) {
      throw new UsageError(`--${kind}-host needs --${kind}-principal`);
    }
  }
  return out;
}

/** The bindings --add creates, with the --producer / --consumer conveniences expanded. */
function bindingsToAdd(args: ParsedArgs): AclBinding[] {
  const patternType = patternTypeOf(args, true);
  const who = principals(args);
  if (who.length === 0)
    throw new UsageError(
      'You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.',
    );
  const perResource: { pattern: ResourcePattern; operations: number[] }[] = [];
  if (args.has('producer') || args.has('consumer')) {
    const topics = args.all('topic');
    if (topics.length === 0) throw new UsageError('With --producer or --consumer you must specify a --topic');
    if (args.has('consumer') && args.all('group').length === 0) {
      throw new UsageError('With --consumer you must specify a --group');
    }
    for (const name of topics) {
      const ops: number[] = [];
      if (args.has('producer')) ops.push(AclOperation.WRITE, AclOperation.DESCRIBE, AclOperation.CREATE);
      if (args.has('consumer')) ops.push(AclOperation.READ, AclOperation.DESCRIBE);
      perResource.push({
        pattern: { resourceType: ResourceType.TOPIC, name, patternType },
        operations: [...new Set(ops)],
      });
    }
    if (args.has('consumer')) {
      for (const name of args.all('group')) {
        perResource.push({
          pattern: { resourceType: ResourceType.GROUP, name, patternType },
          operations: [AclOperation.READ],
        });
      }
    }
    if (args.has('producer')) {
      for (const name of args.all('transactional-id')) {
        perResource.push({
          pattern: { resourceType: ResourceType.TRANSACTIONAL_ID, name, patternType },
          operations: [AclOperation.WRITE, AclOperation.DESCRIBE],
        });
      }
      if (args.has('idempotent')) {
        perResource.push({
          pattern: {
            resourceType: ResourceType.CLUSTER,
            name: CLUSTER_RESOURCE_NAME,
            patternType: PatternType.LITERAL,
          },
          operations: [AclOperation.IDEMPOTENT_WRITE],
        });
      }
    }
  } else {
    const ops = operations(args);
    const patterns = resources(args, patternType);
    if (patterns.length === 0)
      throw new UsageError(
        'You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --transactional-id <id>',
      );
    for (const pattern of patterns) {
      const bad = ops.find((op) => !SUPPORTED[pattern.resourceType]!.includes(op));
      if (bad !== undefined) {
        throw new UsageError(
          `ResourceType ${resourceTypeEnumName(pattern.resourceType)} only supports operations ${SUPPORTED[pattern.resourceType]!.map(operationEnumName).join(',')}`,
        );
      }
      perResource.push({ pattern, operations: ops });
    }
  }
  const bindings: AclBinding[] = [];
  for (const { pattern, operations: ops } of perResource) {
    for (const w of who) {
      for (const operation of ops) {
        bindings.push({
          pattern,
          entry: { principal: w.principal, host: w.host, operation, permissionType: w.permissionType },
        });
      }
    }
  }
  return bindings;
}

function describeResource(p: ResourcePattern): string {
  return `ResourcePattern(resourceType=${resourceTypeEnumName(p.resourceType)}, name=${p.name}, patternType=${patternTypeEnumName(p.patternType)})`;
}

function describeEntry(e: AclEntry): string {
  return `(principal=${e.principal}, host=${e.host}, operation=${operationEnumName(e.operation)}, permissionType=${permissionEnumName(e.permissionType)})`;
}

function grouped(bindings: readonly AclBinding[]): { pattern: ResourcePattern; entries: AclEntry[] }[] {
  const map = new Map<string, { pattern: ResourcePattern; entries: AclEntry[] }>();
  for (const b of bindings) {
    const key = patternKey(b.pattern);
    const g = map.get(key) ?? { pattern: b.pattern, entries: [] };
    g.entries.push(b.entry);
    map.set(key, g);
  }
  return [...map.values()];
}

function printGroups(title: string, groups: { pattern: ResourcePattern; entries: AclEntry[] }[]): void {
  for (const g of groups) {
    out(`${title} \`${describeResource(g.pattern)}\`: `);
    for (const e of g.entries) out(` \t${describeEntry(e)} `);
    out();
  }
}

function filterOf(pattern: ResourcePattern): AclBindingFilter {
  return {
    resourceType: pattern.resourceType,
    name: pattern.name,
    patternType: pattern.patternType,
    principal: null,
    host: null,
    operation: AclOperation.ANY,
    permissionType: PermissionType.ANY,
  };
}

async function run(args: ParsedArgs): Promise<number> {
  const actions = ['add', 'remove', 'list'].filter((a) => args.has(a));
  if (actions.length !== 1)
    throw new UsageError('Command must include exactly one action: --list, --add, --remove.');
  const admin = newClient(() => new Admin(clientOptions(args)));
  try {
    if (args.has('add')) return await add(admin, args);
    if (args.has('remove')) return await remove(admin, args);
    return await list(admin, args);
  } finally {
    await admin.close();
  }
}

async function add(admin: Admin, args: ParsedArgs): Promise<number> {
  const bindings = bindingsToAdd(args);
  const groups = grouped(bindings);
  printGroups('Adding ACLs for resource', groups);
  const errors = await admin.createAcls(bindings);
  let code = 0;
  errors.forEach((e, i) => {
    if (e !== null) {
      err(
        `Error while adding ACLs: ${describeEntry(bindings[i]!.entry)} on ${describeResource(bindings[i]!.pattern)}: ${e.message}`,
      );
      code = 1;
    }
  });
  if (code !== 0) return code;
  for (const g of groups) await printCurrent(admin, g.pattern);
  return 0;
}

async function printCurrent(admin: Admin, pattern: ResourcePattern): Promise<void> {
  const current = await admin.describeAcls(filterOf(pattern));
  printGroups('Current ACLs for resource', grouped(current));
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = await new Promise<string>((resolve) => rl.question(question, resolve));
    return answer.trim().toLowerCase() === 'y';
  } finally {
    rl.close();
  }
}

async function remove(admin: Admin, args: ParsedArgs): Promise<number> {
  const patternType = patternTypeOf(args, false);
  const patterns = resources(args, patternType);
  if (patterns.length === 0)
    throw new UsageError(
      'You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --transactional-id <id>',
    );
  const who = principals(args);
  const filters: AclBindingFilter[] = [];
  for (const pattern of patterns) {
    if (who.length === 0) {
      filters.push(filterOf(pattern));
      continue;
    }
    const ops = args.all('operation').length === 0 ? [AclOperation.ANY] : operations(args);
    for (const w of who) {
      for (const operation of ops) {
        filters.push({
          ...filterOf(pattern),
          principal: w.principal,
          host: w.host,
          operation,
          permissionType: w.permissionType,
        });
      }
    }
  }
  if (!args.has('force')) {
    const what = who.length === 0 ? 'all ACLs for resource filter' : 'ACLs';
    const names = patterns.map(describeResource).join(', ');
    if (!(await confirm(`Are you sure you want to delete ${what} \`${names}\`? (y/n)`))) return 0;
  }
  const results = await admin.deleteAcls(filters);
  let code = 0;
  for (const r of results) {
    if (r.error !== null) {
      err(`Error while removing ACLs: ${r.error.message}`);
      code = 1;
    }
  }
  if (code === 0) for (const pattern of patterns) await printCurrent(admin, pattern);
  return code;
}

async function list(admin: Admin, args: ParsedArgs): Promise<number> {
  const patternType = patternTypeOf(args, false);
  const patterns = resources(args, patternType);
  const filters: AclBindingFilter[] =
    patterns.length === 0
      ? [
          {
            ...filterOf({ resourceType: ResourceType.ANY, name: '', patternType: PatternType.ANY }),
            name: null,
          },
        ]
      : patterns.map(filterOf);
  const wanted = args.all('principal');
  const found: AclBinding[] = [];
  for (const filter of filters) {
    if (wanted.length === 0) found.push(...(await admin.describeAcls(filter)));
    for (const principal of wanted) found.push(...(await admin.describeAcls({ ...filter, principal })));
  }
  if (args.has('json')) {
    out(
      JSON.stringify(
        found.map((b) => ({
          resourceType: resourceTypeEnumName(b.pattern.resourceType),
          name: b.pattern.name,
          patternType: patternTypeEnumName(b.pattern.patternType),
          principal: b.entry.principal,
          host: b.entry.host,
          operation: operationEnumName(b.entry.operation),
          permissionType: permissionEnumName(b.entry.permissionType),
        })),
      ),
    );
    return 0;
  }
  const title =
    wanted.length === 0 ? 'Current ACLs for resource' : `ACLs for principal \`${wanted.join(', ')}\``;
  printGroups(wanted.length === 0 ? title : 'Current ACLs for resource', grouped(found));
  return 0;
}
