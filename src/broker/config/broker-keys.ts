// The registry of every broker key Brook knows, assembled from the per-area tables. Lookups by name go through
// here so that a key defined twice is caught when the module loads, not when a handler trips over it.

import { assert } from '../../common/assert.js';
import { BROOK_KEYS } from './broker-keys-brook.js';
import { COORDINATOR_KEYS } from './broker-keys-coordinator.js';
import { LOG_KEYS } from './broker-keys-log.js';
import { REPLICATION_KEYS } from './broker-keys-replication.js';
import { SECURITY_KEYS } from './broker-keys-security.js';
import { SERVER_KEYS } from './broker-keys-server.js';
import type { ConfigKeyDef } from './config-types.js';

function index(defs: readonly ConfigKeyDef[]): ReadonlyMap<string, ConfigKeyDef> {
  const map = new Map<string, ConfigKeyDef>();
  for (const def of defs) {
    assert(!map.has(def.name), `broker config key ${def.name} is defined twice`);
    map.set(def.name, def);
  }
  return map;
}

export const BROKER_KEYS: ReadonlyMap<string, ConfigKeyDef> = index([
  ...SERVER_KEYS,
  ...SECURITY_KEYS,
  ...LOG_KEYS,
  ...REPLICATION_KEYS,
  ...COORDINATOR_KEYS,
  ...BROOK_KEYS,
]);

/**
 * Keys that may be set for one listener as `listener.name.<listener>.<key>` (Kafka's per-listener overrides):
 * TLS and SASL settings, where SASL ones (and connections.max.reauth.ms) may also carry a mechanism
 * (`...<listener>.plain.sasl.jaas.config`), and the connection bounds Kafka applies per listener.
 */
const PER_LISTENER_KEYS = new Set([
  'connections.max.reauth.ms',
  'max.connections',
  'max.connection.creation.rate',
  'principal.builder.class',
]);
const LISTENER_KEY_PATTERN = /^listener\.name\.([^.]+)\.(.+)$/;

export interface ListenerKey {
  /** Upper-case listener name, as in BrokerConfig.listeners. */
  readonly listenerName: string;
  /** Lower-case SASL mechanism for mechanism-scoped keys, e.g. plain or scram-sha-256. */
  readonly mechanism: string | null;
  readonly baseName: string;
}

function listenerOverridable(name: string): boolean {
  return name.startsWith('ssl.') || name.startsWith('sasl.') || PER_LISTENER_KEYS.has(name);
}

export function parseListenerKey(name: string): ListenerKey | undefined {
  const match = LISTENER_KEY_PATTERN.exec(name);
  if (match === null) return undefined;
  const listenerName = (match[1] as string).toUpperCase();
  const rest = match[2] as string;
  if (BROKER_KEYS.has(rest)) {
    return listenerOverridable(rest) ? { listenerName, mechanism: null, baseName: rest } : undefined;
  }
  const dot = rest.indexOf('.');
  const baseName = rest.slice(dot + 1);
  if (dot <= 0 || !mechanismScoped(baseName) || !BROKER_KEYS.has(baseName)) return undefined;
  return { listenerName, mechanism: rest.slice(0, dot).toLowerCase(), baseName };
}

/**
 * Keys that may also carry a SASL mechanism after the listener: the SASL settings, and connections.max.reauth.ms,
 * which Kafka reads per mechanism (`listener.name.sasl_ssl.oauthbearer.connections.max.reauth.ms`, its
 * documented example) so that, say, OAUTHBEARER sessions end while PLAIN ones do not.
 */
function mechanismScoped(baseName: string): boolean {
  return baseName.startsWith('sasl.') || baseName === 'connections.max.reauth.ms';
}

/** The definition of a broker key; a listener override gets its base key's definition under its own name. */
export function brokerKey(name: string): ConfigKeyDef | undefined {
  const def = BROKER_KEYS.get(name);
  if (def !== undefined) return def;
  const listenerKey = parseListenerKey(name);
  if (listenerKey === undefined) return undefined;
  return { ...(BROKER_KEYS.get(listenerKey.baseName) as ConfigKeyDef), name };
}

/** The name of a key as overridden for one listener (and SASL mechanism). */
export function listenerKeyName(
  listenerName: string,
  baseName: string,
  mechanism: string | null = null,
): string {
  const scoped = mechanism === null ? baseName : `${mechanism.toLowerCase()}.${baseName}`;
  return `listener.name.${listenerName.toLowerCase()}.${scoped}`;
}

/**
 * Broker keys that stand for one setting in different units, highest precedence first, as Kafka lists them
 * for DescribeConfigs synonyms. Within one config layer the first key set wins.
 */
export const BROKER_SYNONYM_GROUPS: readonly (readonly string[])[] = [
  ['log.roll.ms', 'log.roll.hours'],
  ['log.roll.jitter.ms', 'log.roll.jitter.hours'],
  ['log.retention.ms', 'log.retention.minutes', 'log.retention.hours'],
  ['log.flush.interval.ms', 'log.flush.scheduler.interval.ms'],
];

/** The synonym group a broker key belongs to, or a group of just itself; a listener override falls back to its base. */
export function brokerSynonyms(name: string): readonly string[] {
  const listenerKey = parseListenerKey(name);
  if (listenerKey !== undefined) return [name, listenerKey.baseName];
  return BROKER_SYNONYM_GROUPS.find((group) => group.includes(name)) ?? [name];
}
