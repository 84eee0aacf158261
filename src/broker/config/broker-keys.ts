// The registry of every broker key Brook knows, assembled from the per-area tables. Lookups by name go through
// here so that a key defined twice is caught when the module loads, not when a handler trips over it.

import { assert } from '../../common/assert.js';
import { BROOK_KEYS } from './broker-keys-brook.js';
import { COORDINATOR_KEYS } from './broker-keys-coordinator.js';
import { LOG_KEYS } from './broker-keys-log.js';
import { REPLICATION_KEYS } from './broker-keys-replication.js';
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
  ...LOG_KEYS,
  ...REPLICATION_KEYS,
  ...COORDINATOR_KEYS,
  ...BROOK_KEYS,
]);

export function brokerKey(name: string): ConfigKeyDef | undefined {
  return BROKER_KEYS.get(name);
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

/** The synonym group a broker key belongs to, or a group of just itself. */
export function brokerSynonyms(name: string): readonly string[] {
  return BROKER_SYNONYM_GROUPS.find((group) => group.includes(name)) ?? [name];
}
