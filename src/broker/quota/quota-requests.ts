// AlterClientQuotas and DescribeClientQuotas without the wire: Kafka's validation (its ClientQuotaControlManager
// messages), the store updates, and the describe filter (its ZkAdminManager.describeClientQuotas semantics).

import { isIP } from 'node:net';
import { ErrorCode } from '../../protocol/errors.js';
import type { ClientQuotaStore } from './client-quota-store.js';
import { javaDouble } from './java-numbers.js';
import {
  CLIENT_ID_ENTITY_TYPE,
  CLIENT_QUOTA_KEYS,
  type EntityPart,
  IP_CONNECTION_RATE_KEY,
  IP_ENTITY_TYPE,
  type QuotaEntity,
  USER_ENTITY_TYPE,
} from './quota-entity.js';

export interface QuotaError {
  readonly errorCode: number;
  readonly errorMessage: string;
}

const invalid = (errorMessage: string): QuotaError => ({
  errorCode: ErrorCode.INVALID_REQUEST,
  errorMessage,
});

/**
 * An entity of the wire (type and name pairs, a null name for the default) as a QuotaEntity, or Kafka's error:
 * each part checked first (ClientQuotaControlManager.validateEntity), then the combination and the address.
 */
export function parseQuotaEntity(
  parts: readonly { entityType: string; entityName: string | null }[],
): QuotaEntity | QuotaError {
  if (parts.length === 0) return invalid('Invalid empty client quota entity');
  let user: EntityPart;
  let clientId: EntityPart;
  let ip: EntityPart;
  const seen = new Set<string>();
  for (const { entityType, entityName } of parts) {
    if (seen.has(entityType))
      return invalid(`Invalid client quota entity, duplicate entity entry ${entityType}`);
    seen.add(entityType);
    if (entityType === USER_ENTITY_TYPE) user = entityName;
    else if (entityType === CLIENT_ID_ENTITY_TYPE) clientId = entityName;
    else if (entityType === IP_ENTITY_TYPE) ip = entityName;
    else return invalid(`Unhandled client quota entity type: ${entityType}`);
    if (entityName === '') return invalid(`Empty ${entityType} not supported`);
  }
  if (ip === undefined) return { user, clientId };
  if (user !== undefined || clientId !== undefined)
    return invalid(
      'Invalid quota entity combination, IP entity should not be used with user/client ID entity.',
    );
  // Kafka resolves host names here; Brook takes addresses, which is what connections are counted by.
  if (ip !== null && isIP(ip) === 0) return invalid(`${ip} is not a valid IP or resolvable host.`);
  return { user: undefined, clientId: undefined, ip };
}

export function isQuotaError(x: QuotaEntity | QuotaError): x is QuotaError {
  return (x as QuotaError).errorCode !== undefined;
}

export interface QuotaOp {
  readonly key: string;
  readonly value: number;
  readonly remove: boolean;
}

/** The keys an entity may have: connection_creation_rate for an IP, the client quota keys for the others. */
function keysOf(entity: QuotaEntity): ReadonlyMap<string, 'long' | 'double' | 'int'> {
  return entity.ip !== undefined ? IP_QUOTA_KEYS : CLIENT_QUOTA_KEYS;
}

const IP_QUOTA_KEYS: ReadonlyMap<string, 'int'> = new Map([[IP_CONNECTION_RATE_KEY, 'int']]);

/** Checks the ops of one entity as Kafka does; null when they may be applied. */
export function validateQuotaOps(ops: readonly QuotaOp[], entity: QuotaEntity): QuotaError | null {
  const keys = new Set<string>();
  for (const op of ops) {
    if (keys.has(op.key)) return invalid(`Duplicate quota key ${op.key} not updating quota for this entity`);
    keys.add(op.key);
    if (op.remove) continue;
    const type = keysOf(entity).get(op.key);
    if (type === undefined) return invalid(`Invalid configuration key ${op.key}`);
    if (!(op.value > 0)) return invalid(`Quota ${op.key} must be greater than 0`);
    if (type === 'long') {
      if (op.value >= 2 ** 63) return invalid(`Proposed value for ${op.key} is too large for a LONG.`);
      if (Math.abs(op.value % 1) > 1e-6) return invalid(`${op.key} cannot be a fractional value.`);
    }
    if (type === 'int') {
      if (op.value >= 2 ** 31) return invalid(`Proposed value for ${op.key} is too large for an INT.`);
      if (Math.abs(op.value % 1) > 1e-6) return invalid(`${op.key} cannot be a fractional value.`);
    }
  }
  return null;
}

/** The entity's document with the ops applied (other keys, such as SCRAM credentials, kept). */
export function applyQuotaOps(configs: Map<string, string>, ops: readonly QuotaOp[]): Map<string, string> {
  const next = new Map(configs);
  for (const op of ops) {
    if (op.remove) next.delete(op.key);
    else {
      const integral = CLIENT_QUOTA_KEYS.get(op.key) === 'long' || op.key === IP_CONNECTION_RATE_KEY;
      next.set(op.key, integral ? String(Math.round(op.value)) : String(op.value));
    }
  }
  return next;
}

/** Applies ops to the store, retrying when another writer changed the document meanwhile. */
export async function alterEntityQuotas(
  store: ClientQuotaStore,
  entity: QuotaEntity,
  ops: readonly QuotaOp[],
): Promise<QuotaError | null> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await store.read(entity);
    // Written over a failed read, a user's document would lose its SCRAM credentials and other quotas.
    if (current === null) break;
    if (await store.write(entity, applyQuotaOps(current, ops))) return null;
  }
  return {
    errorCode: ErrorCode.UNKNOWN_SERVER_ERROR,
    errorMessage: 'the metadata store refused the quota update',
  };
}

/** One component of a describe filter: an exact name (null: the default entity) or any specified name. */
export type FilterMatch =
  | { readonly kind: 'exact'; readonly name: string | null }
  | { readonly kind: 'specified' };

export interface QuotaFilter {
  readonly user: FilterMatch | undefined;
  readonly clientId: FilterMatch | undefined;
  /** An ip component (never with user or client id components). */
  readonly ip: FilterMatch | undefined;
  readonly strict: boolean;
}

const MATCH_EXACT = 0;
const MATCH_DEFAULT = 1;
const MATCH_SPECIFIED = 2;

export function parseQuotaFilter(
  components: readonly { entityType: string; matchType: number; match: string | null }[],
  strict: boolean,
): QuotaFilter | QuotaError {
  let user: FilterMatch | undefined;
  let clientId: FilterMatch | undefined;
  let ip: FilterMatch | undefined;
  for (const c of components) {
    let match: FilterMatch;
    if (c.matchType === MATCH_EXACT) {
      // Kafka refuses it too (ClientQuotasImage; its ZooKeeper mode failed on the null name).
      if (c.match === null)
        return invalid('Request specified MATCH_TYPE_EXACT, but set match string to null.');
      match = { kind: 'exact', name: c.match };
    } else if (c.matchType === MATCH_DEFAULT) match = { kind: 'exact', name: null };
    else if (c.matchType === MATCH_SPECIFIED) match = { kind: 'specified' };
    else
      return {
        errorCode: ErrorCode.UNKNOWN_SERVER_ERROR,
        errorMessage: `Unexpected match type: ${c.matchType}`,
      };
    if (c.entityType === USER_ENTITY_TYPE) {
      if (user !== undefined) return invalid('Duplicate user filter component entity type');
      user = match;
    } else if (c.entityType === CLIENT_ID_ENTITY_TYPE) {
      if (clientId !== undefined) return invalid('Duplicate client filter component entity type');
      clientId = match;
    } else if (c.entityType === IP_ENTITY_TYPE) {
      if (ip !== undefined) return invalid('Duplicate ip filter component entity type');
      ip = match;
    } else if (c.entityType === '') {
      return invalid('Unexpected empty filter component entity type');
    } else {
      return {
        errorCode: ErrorCode.UNSUPPORTED_VERSION,
        errorMessage: `Custom entity type '${c.entityType}' not supported`,
      };
    }
  }
  if (ip !== undefined && (user !== undefined || clientId !== undefined))
    return invalid(
      'Invalid entity filter component combination, IP filter component should not be used with user or clientId filter component.',
    );
  return { user, clientId, ip, strict };
}

function matches(component: FilterMatch | undefined, part: EntityPart, strict: boolean): boolean {
  if (component === undefined) return part === undefined || !strict;
  if (part === undefined) return false;
  return component.kind === 'specified' || component.name === part;
}

/**
 * Whether Kafka's ZooKeeper-mode describe reads the entity's document (ZkAdminManager.handleDescribeClientQuotas
 * and handleDescribeIpQuotas): the named entity only for an exact (or default) component of its kind, when the
 * filter leaves out the other part; otherwise every entity of a kind the filter may match. A document Kafka cannot
 * decode fails the describe when it is read, whether the filter then matches the entity or not.
 */
function readByKafka(filter: QuotaFilter, entity: QuotaEntity): boolean {
  const { user, clientId, ip, strict } = filter;
  const excluded = (c: FilterMatch | undefined) => strict && c === undefined;
  if (entity.ip !== undefined) {
    if (user !== undefined || clientId !== undefined) return false;
    if (ip?.kind === 'exact') return ip.name === entity.ip;
    return ip !== undefined || !strict;
  }
  if (ip !== undefined) return false;
  const exactUser = user?.kind === 'exact' ? user : undefined;
  const exactClientId = clientId?.kind === 'exact' ? clientId : undefined;
  if (entity.clientId === undefined) {
    if (exactUser !== undefined && excluded(clientId)) return exactUser.name === entity.user;
    return !excluded(user) && exactClientId === undefined;
  }
  if (entity.user === undefined) {
    if (excluded(user) && exactClientId !== undefined) return exactClientId.name === entity.clientId;
    return exactUser === undefined && !excluded(clientId);
  }
  if (exactUser !== undefined && exactClientId !== undefined)
    return exactUser.name === entity.user && exactClientId.name === entity.clientId;
  return !excluded(user) && !excluded(clientId);
}

export interface DescribedQuotas {
  readonly entity: QuotaEntity;
  readonly values: { key: string; value: number }[];
}

/**
 * A describe's answer, or why it has none: the store could not be read, or it holds what Kafka's read throws on
 * (a document with a value that is not a string, or a matched quota value Double.parseDouble refuses).
 */
export type DescribeOutcome =
  | { readonly ok: true; readonly described: DescribedQuotas[] }
  | { readonly ok: false; readonly failed: 'unreadable' | 'refused'; readonly reason: string };

export async function describeQuotas(store: ClientQuotaStore, filter: QuotaFilter): Promise<DescribeOutcome> {
  const described: DescribedQuotas[] = [];
  const all = await store.all();
  if (all === null)
    return { ok: false, failed: 'unreadable', reason: 'the metadata store could not be read' };
  // As Kafka's reads, whose decode throws on a value that is not a string: no partial answer.
  if (all.refused.some((entity) => readByKafka(filter, entity)))
    return { ok: false, failed: 'refused', reason: `a quota document holds a value that is not a string` };
  for (const { entity, configs } of all.read) {
    if (!matches(filter.user, entity.user, filter.strict)) continue;
    if (!matches(filter.clientId, entity.clientId, filter.strict)) continue;
    if (!matches(filter.ip, entity.ip, filter.strict)) continue;
    // As Kafka (ZkAdminManager.describeClientQuotas, ClientQuotasImage): a filter with an ip component lists IP
    // entities only, one with a user or client-id component user and client entities only; an empty filter that
    // is not strict lists both.
    if (
      entity.ip === undefined
        ? filter.ip !== undefined
        : filter.user !== undefined || filter.clientId !== undefined
    )
      continue;
    const keys = keysOf(entity);
    const values: { key: string; value: number }[] = [];
    for (const [key, text] of configs) {
      if (!keys.has(key)) continue;
      // Kafka's clientQuotaPropsToDoubleMap reads every quota key with toDouble (NaN and Infinity included) and
      // throws IllegalStateException on what it refuses, failing the whole describe rather than leaving it out.
      const value = javaDouble(text);
      if (value === null)
        return {
          ok: false,
          failed: 'refused',
          reason: `Unexpected client quota configuration value: ${key} -> ${text}`,
        };
      values.push({ key, value });
    }
    if (values.length > 0) described.push({ entity, values });
  }
  return { ok: true, described };
}

/** An entity as the wire lists it: user first, then client id; null names for default entities. */
export function entityParts(entity: QuotaEntity): { entityType: string; entityName: string | null }[] {
  const parts: { entityType: string; entityName: string | null }[] = [];
  if (entity.user !== undefined) parts.push({ entityType: USER_ENTITY_TYPE, entityName: entity.user });
  if (entity.clientId !== undefined)
    parts.push({ entityType: CLIENT_ID_ENTITY_TYPE, entityName: entity.clientId });
  if (entity.ip !== undefined) parts.push({ entityType: IP_ENTITY_TYPE, entityName: entity.ip });
  return parts;
}
