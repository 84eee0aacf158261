// The console's JSON API: routes `/api/...` to the views (cluster-views.ts, message-browser.ts, live-metrics.ts),
// checks every input before it reaches the client, and runs every call under the API's deadline so that a slow
// or dead broker answers 504 (or the client's 502) instead of holding the page. Shapes: api-types.ts.
//
// GET    /api/cluster                         brokers and their state
// GET    /api/topics                          topics with partition counts, under-replicated, sizes
// POST   /api/topics                          create {name, partitions?, replicationFactor?, configs?}
// GET    /api/topics/:t                       partitions (leader, replicas, ISR, offsets, sizes) and configs
// DELETE /api/topics/:t                       delete, {confirm: "<the topic's name>"}
// POST   /api/topics/:t/configs               {set: {key: value | null}} (null: back to the default)
// POST   /api/topics/:t/partitions            {count}
// GET    /api/topics/:t/messages              ?mode=newest|oldest|offset|timestamp&partition&offset&timestamp&limit
// POST   /api/topics/:t/messages              produce {partition?, key?, value, headers?}
// GET    /api/groups, /api/groups/:g          groups; members, assignments, lag per partition
// POST   /api/groups/:g/reset-offsets         {topic?, to: earliest|latest|offset|timestamp, value?}
// GET    /api/acls                            ?resourceType&resourceName&patternType&principal (DescribeAcls filter)
// POST   /api/acls                            create one binding {principal, host?, operation, permission,
//                                              resourceType, resourceName, patternType?}
// DELETE /api/acls                            delete exactly one binding, the same fields and {confirm: true}
// GET    /api/quotas                          client quotas of every entity (users, clients, IPs, defaults)
// POST   /api/quotas                          {entity: {user?, clientId?, ip?}, set: {key: number | null}}
// GET    /api/metrics                         the live charts' points

import type { Admin, ClientQuotaEntity } from '../client/admin.js';
import type { ClientOptions } from '../client/options.js';
import type { Producer } from '../client/producer.js';
import {
  type AclBinding,
  type AclBindingFilter,
  AclOperation,
  PatternType,
  PermissionType,
  parseOperation,
  parsePatternType,
  parsePermission,
  parseResourceType,
  STORABLE_RESOURCE_TYPES,
} from '../security/authorizer/acl-types.js';
import { HttpError, withDeadline } from './api-error.js';
import type { BrowseMode, ResetOffsetsRequest } from './api-types.js';
import * as views from './cluster-views.js';
import type { ApiHandler, ApiRequest } from './console-server.js';
import type { LiveMetrics } from './live-metrics.js';
import { BROWSE_LIMIT_MAX, browse, produce } from './message-browser.js';

export interface ConsoleApiDeps {
  admin: Admin;
  clientOptions: ClientOptions;
  producer: () => Producer;
  metrics: LiveMetrics;
  /** Bound of one API call's work against the cluster. */
  timeoutMs: number;
  bootstrapServers: string;
}

// ---- input checks ---------------------------------------------------------------------------------------------

function object(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new HttpError(400, 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

function int(value: unknown, what: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new HttpError(
      400,
      `${what} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`,
    );
  }
  return n;
}

function optionalInt(value: unknown, what: string, min: number, max?: number): number | undefined {
  return value === undefined || value === null || value === '' ? undefined : int(value, what, min, max);
}

function str(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '')
    throw new HttpError(400, `${what} must be a non-empty string`);
  return value;
}

function stringMap(value: unknown, what: string, allowNull: boolean): Record<string, string | null> {
  if (value === undefined) return {};
  const o = object(value);
  for (const [k, v] of Object.entries(o)) {
    if (typeof v !== 'string' && !(allowNull && v === null))
      throw new HttpError(400, `${what}.${k} must be a string`);
  }
  return o as Record<string, string | null>;
}

/** Kafka's topic name rule (Topic.validate): 1-249 of [a-zA-Z0-9._-], not "." or "..". */
function topicName(value: unknown): string {
  const name = str(value, 'name');
  if (name.length > 249 || !/^[a-zA-Z0-9._-]+$/.test(name) || name === '.' || name === '..') {
    throw new HttpError(400, `'${name}' is not a legal topic name: 1-249 of a-z, A-Z, 0-9, '.', '_' and '-'`);
  }
  return name;
}

/** A name of one of Kafka's ACL enums ("Topic", "ClusterAction", "PREFIXED"), as a code among `allowed`. */
function aclEnum(
  value: unknown,
  what: string,
  parse: (text: string) => number | null,
  allowed: readonly number[],
  names: string,
): number {
  const code = typeof value === 'string' ? parse(value) : null;
  if (code === null || !allowed.includes(code)) {
    throw new HttpError(400, `${what} must be one of ${names}, got ${JSON.stringify(value)}`);
  }
  return code;
}

const OPERATIONS = Object.values(AclOperation).filter(
  (c) => c !== AclOperation.UNKNOWN && c !== AclOperation.ANY,
);
const OPERATION_NAMES =
  'All, Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens';
const RESOURCE_TYPE_NAMES = 'Topic, Group, Cluster, TransactionalId, DelegationToken, User';

/** Kafka's principal form "Type:name" (SecurityUtils.parseKafkaPrincipal), e.g. "User:alice" or "User:*". */
function principal(value: unknown): string {
  const p = str(value, 'principal');
  if (!/^[^:\s]+:.+$/.test(p))
    throw new HttpError(400, `principal must be Type:name (User:alice), got '${p}'`);
  return p;
}

/** One ACL binding as the page sends it, for CreateAcls and (exactly) DeleteAcls. */
function aclBinding(body: Record<string, unknown>): AclBinding {
  const resourceType = aclEnum(
    body.resourceType,
    'resourceType',
    parseResourceType,
    STORABLE_RESOURCE_TYPES,
    RESOURCE_TYPE_NAMES,
  );
  return {
    pattern: {
      resourceType,
      name: str(body.resourceName, 'resourceName'),
      patternType: aclEnum(
        body.patternType ?? 'LITERAL',
        'patternType',
        parsePatternType,
        [PatternType.LITERAL, PatternType.PREFIXED],
        'LITERAL, PREFIXED',
      ),
    },
    entry: {
      principal: principal(body.principal),
      host: body.host === undefined || body.host === '' ? '*' : str(body.host, 'host'),
      operation: aclEnum(body.operation, 'operation', parseOperation, OPERATIONS, OPERATION_NAMES),
      permissionType: aclEnum(
        body.permission,
        'permission',
        parsePermission,
        [PermissionType.ALLOW, PermissionType.DENY],
        'Allow, Deny',
      ),
    },
  };
}

/** The list's filter from the query string: DescribeAcls matches names and principals exactly. */
function aclFilter(query: URLSearchParams): Partial<AclBindingFilter> {
  const filter: { -readonly [K in keyof AclBindingFilter]?: AclBindingFilter[K] } = {};
  const type = query.get('resourceType');
  if (type !== null && type !== '' && type.toLowerCase() !== 'any') {
    filter.resourceType = aclEnum(
      type,
      'resourceType',
      parseResourceType,
      STORABLE_RESOURCE_TYPES,
      RESOURCE_TYPE_NAMES,
    );
  }
  const pattern = query.get('patternType');
  if (pattern !== null && pattern !== '') {
    filter.patternType = aclEnum(
      pattern,
      'patternType',
      parsePatternType,
      [PatternType.ANY, PatternType.MATCH, PatternType.LITERAL, PatternType.PREFIXED],
      'ANY, MATCH, LITERAL, PREFIXED',
    );
  }
  const name = query.get('resourceName');
  if (name !== null && name !== '') filter.name = name;
  const p = query.get('principal');
  if (p !== null && p !== '') filter.principal = principal(p);
  if (filter.patternType === PatternType.MATCH && filter.name === undefined) {
    throw new HttpError(400, 'patternType MATCH needs a resourceName to match');
  }
  return filter;
}

/** Kafka's client quota keys (QuotaConfigs): the first four for users and client ids, the last for IPs. */
const QUOTA_KEYS = [
  'producer_byte_rate',
  'consumer_byte_rate',
  'request_percentage',
  'controller_mutation_rate',
  'connection_creation_rate',
];

/** A quota entity: each part a name or null (the default); at least one part; an IP stands alone. */
function quotaEntity(value: unknown): ClientQuotaEntity {
  const o = object(value);
  const entity: ClientQuotaEntity = {};
  for (const [k, v] of Object.entries(o)) {
    if (k !== 'user' && k !== 'clientId' && k !== 'ip')
      throw new HttpError(400, `entity parts are user, clientId and ip, not '${k}'`);
    if (v !== null && (typeof v !== 'string' || v === ''))
      throw new HttpError(400, `entity.${k} must be a name or null (the default)`);
    entity[k] = v;
  }
  const parts = Object.keys(entity).length;
  if (parts === 0) throw new HttpError(400, 'the entity names no user, clientId or ip');
  if (entity.ip !== undefined && parts > 1) throw new HttpError(400, 'an ip entity stands alone');
  return entity;
}

function quotaSet(value: unknown): Record<string, number | null> {
  const o = object(value);
  const set: Record<string, number | null> = {};
  for (const [k, v] of Object.entries(o)) {
    if (!QUOTA_KEYS.includes(k))
      throw new HttpError(400, `'${k}' is not a quota; one of ${QUOTA_KEYS.join(', ')}`);
    const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
    if (n !== null && (typeof n !== 'number' || !Number.isFinite(n)))
      throw new HttpError(400, `set.${k} must be a number or null (remove), got ${JSON.stringify(v)}`);
    set[k] = n;
  }
  if (Object.keys(set).length === 0) throw new HttpError(400, 'set names no quota');
  return set;
}

const MODES: BrowseMode[] = ['newest', 'oldest', 'offset', 'timestamp'];
const RESET_TO = ['earliest', 'latest', 'offset', 'timestamp'] as const;

// ---- routes ---------------------------------------------------------------------------------------------------

export function consoleApi(deps: ConsoleApiDeps): ApiHandler {
  const { admin } = deps;
  const bounded = <T>(work: () => Promise<T>, what: string): Promise<T> =>
    withDeadline(Promise.resolve().then(work), deps.timeoutMs, what);

  const topicRoutes = async (
    r: ApiRequest,
    name: string,
    rest: string[],
  ): Promise<{ status?: number; body: unknown }> => {
    if (rest.length === 0) {
      if (r.method === 'GET')
        return { body: await bounded(() => views.topicView(admin, name), `topic ${name}`) };
      if (r.method === 'DELETE') {
        const confirm = object(r.body).confirm;
        if (confirm !== name)
          throw new HttpError(400, `to delete, confirm with the topic's name ('${name}')`);
        await bounded(() => views.deleteTopic(admin, name), `delete topic ${name}`);
        return { body: { deleted: name } };
      }
    } else if (rest.length === 1 && r.method === 'POST' && rest[0] === 'configs') {
      const set = stringMap(object(r.body).set, 'set', true);
      if (Object.keys(set).length === 0) throw new HttpError(400, 'set names no config');
      await bounded(() => views.alterTopicConfigs(admin, name, set), `configs of ${name}`);
      return { body: { altered: Object.keys(set) } };
    } else if (rest.length === 1 && r.method === 'POST' && rest[0] === 'partitions') {
      const count = int(object(r.body).count, 'count', 1, 100_000);
      await bounded(() => views.addPartitions(admin, name, count), `partitions of ${name}`);
      return { body: { partitions: count } };
    } else if (rest.length === 1 && rest[0] === 'messages') {
      if (r.method === 'GET') return { body: await browseRoute(r, name) };
      if (r.method === 'POST') {
        const b = object(r.body);
        if (b.value !== null && typeof b.value !== 'string')
          throw new HttpError(400, 'value must be a string or null');
        if (b.key !== undefined && b.key !== null && typeof b.key !== 'string')
          throw new HttpError(400, 'key must be a string');
        const headers = stringMap(b.headers, 'headers', false) as Record<string, string>;
        const partition = optionalInt(b.partition, 'partition', 0);
        const request = {
          value: b.value,
          key: b.key === undefined || b.key === '' ? null : (b.key as string | null),
          headers,
          ...(partition === undefined ? {} : { partition }),
        };
        return {
          status: 201,
          body: await bounded(() => produce(deps.producer(), name, request), `produce to ${name}`),
        };
      }
    } else {
      throw new HttpError(404, `no API at /api/topics/${name}/${rest.join('/')}`);
    }
    throw new HttpError(405, `method ${r.method} not allowed here`);
  };

  const browseRoute = (r: ApiRequest, name: string) => {
    const mode = (r.query.get('mode') ?? 'newest') as BrowseMode;
    if (!MODES.includes(mode)) throw new HttpError(400, `mode must be one of ${MODES.join(', ')}`);
    const query = {
      mode,
      limit: optionalInt(r.query.get('limit'), 'limit', 1, BROWSE_LIMIT_MAX) ?? 50,
      partition: optionalInt(r.query.get('partition'), 'partition', 0),
      offset: mode === 'offset' ? int(r.query.get('offset'), 'offset', 0) : undefined,
      timestampMs: mode === 'timestamp' ? int(r.query.get('timestamp'), 'timestamp', 0) : undefined,
    };
    // Reading stops early enough to answer within the API's deadline, with what was read by then.
    const budgetMs = Math.max(500, Math.min(5_000, deps.timeoutMs / 2));
    return bounded(() => browse(admin, deps.clientOptions, name, query, budgetMs), `messages of ${name}`);
  };

  const groupRoutes = async (r: ApiRequest, groupId: string, rest: string[]): Promise<{ body: unknown }> => {
    if (rest.length === 0 && r.method === 'GET') {
      return { body: await bounded(() => views.groupView(admin, groupId), `group ${groupId}`) };
    }
    if (rest.length === 1 && rest[0] === 'reset-offsets' && r.method === 'POST') {
      const b = object(r.body);
      const to = b.to as ResetOffsetsRequest['to'];
      if (!RESET_TO.includes(to)) throw new HttpError(400, `to must be one of ${RESET_TO.join(', ')}`);
      const request: ResetOffsetsRequest = { to };
      if (b.topic !== undefined && b.topic !== '') request.topic = topicName(b.topic);
      if (to === 'offset' || to === 'timestamp') request.value = int(b.value, 'value', 0);
      return {
        body: await bounded(() => views.resetOffsets(admin, groupId, request), `reset offsets of ${groupId}`),
      };
    }
    throw new HttpError(
      rest.length <= 1 ? 405 : 404,
      `no ${r.method} at /api/groups/${groupId}/${rest.join('/')}`,
    );
  };

  return async (r) => {
    const [area, id, ...rest] = r.segments;
    const get = r.method === 'GET';
    switch (area) {
      case 'info':
        if (get && id === undefined)
          return { body: { bootstrapServers: deps.bootstrapServers, timeoutMs: deps.timeoutMs } };
        break;
      case 'cluster':
        if (get && id === undefined)
          return { body: await bounded(() => views.clusterView(admin), 'cluster') };
        break;
      case 'topics':
        if (id !== undefined) return topicRoutes(r, topicName(id), rest);
        if (get) return { body: await bounded(() => views.topicList(admin), 'topics') };
        if (r.method === 'POST') {
          const b = object(r.body);
          const request = {
            name: topicName(b.name),
            partitions: optionalInt(b.partitions, 'partitions', 1, 100_000),
            replicationFactor: optionalInt(b.replicationFactor, 'replicationFactor', 1, 32_767),
            configs: stringMap(b.configs, 'configs', false) as Record<string, string>,
          };
          await bounded(() => views.createTopic(admin, request), `create topic ${request.name}`);
          return { status: 201, body: { created: request.name } };
        }
        throw new HttpError(405, `method ${r.method} not allowed at /api/topics`);
      case 'groups':
        if (id !== undefined) return groupRoutes(r, id, rest);
        if (get) return { body: await bounded(() => views.groupList(admin), 'groups') };
        break;
      case 'acls':
        if (id !== undefined) break;
        if (get) {
          const filter = aclFilter(r.query);
          return { body: await bounded(() => views.aclList(admin, filter), 'ACLs') };
        }
        if (r.method === 'POST') {
          const binding = aclBinding(object(r.body));
          return { status: 201, body: await bounded(() => views.createAcl(admin, binding), 'create ACL') };
        }
        if (r.method === 'DELETE') {
          const b = object(r.body);
          if (b.confirm !== true)
            throw new HttpError(400, 'to delete an ACL, confirm with {"confirm": true}');
          const binding = aclBinding(b);
          return { body: { deleted: await bounded(() => views.deleteAcl(admin, binding), 'delete ACL') } };
        }
        throw new HttpError(405, `method ${r.method} not allowed at /api/acls`);
      case 'quotas':
        if (id !== undefined) break;
        if (get) return { body: await bounded(() => views.quotaList(admin), 'quotas') };
        if (r.method === 'POST') {
          const b = object(r.body);
          const entity = quotaEntity(b.entity);
          const set = quotaSet(b.set);
          await bounded(() => views.alterQuotas(admin, entity, set), 'alter quotas');
          return { body: { entity, altered: Object.keys(set) } };
        }
        throw new HttpError(405, `method ${r.method} not allowed at /api/quotas`);
      case 'metrics':
        if (get && id === undefined) return { body: deps.metrics.series() };
        break;
      default:
        throw new HttpError(404, `no API at /api/${r.segments.join('/')}`);
    }
    throw new HttpError(get ? 404 : 405, `no ${r.method} at /api/${r.segments.join('/')}`);
  };
}
