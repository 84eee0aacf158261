// The documentation of every broker and topic key, as DescribeConfigs (v3+, include_documentation) returns it:
// never empty, a full sentence, naming the unit of a time or size key and every value of a key whose values
// come from a fixed set, as Kafka's own descriptions do. Meaning is checked by reading against Kafka's docs; these
// rules catch a doc that says "how long" without saying in what, or leaves a valid value out.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BROKER_KEYS } from '../../../src/broker/config/broker-keys.js';
import type { BrokerConfigLayers } from '../../../src/broker/config/config-layers.js';
import type { ConfigKeyDef } from '../../../src/broker/config/config-types.js';
import { describeBrokerConfigs, describeTopicConfigs } from '../../../src/broker/config/describe-configs.js';
import { TOPIC_KEYS } from '../../../src/broker/config/topic-keys.js';

const ALL_KEYS: readonly ConfigKeyDef[] = [...BROKER_KEYS.values(), ...TOPIC_KEYS.values()];

/** Keys counted in bytes whose names do not end in .bytes. */
const BYTE_SIZED = new Set([
  'log.cleaner.dedupe.buffer.size',
  'log.cleaner.io.buffer.size',
  'offsets.load.buffer.size',
  'transaction.state.log.load.buffer.size',
  'sasl.server.max.receive.size',
]);

/** Rates in bytes per second. */
const BYTE_RATES = new Set([
  'leader.replication.throttled.rate',
  'follower.replication.throttled.rate',
  'replica.alter.log.dirs.io.max.bytes.per.second',
  'log.cleaner.io.max.bytes.per.second',
  'brook.self.healing.replication.throttled.rate',
]);

/** The unit a key's documentation must name, from its name (Kafka's suffix conventions) or the lists above. */
function unitOf(name: string): { label: string; pattern: RegExp } | null {
  if (BYTE_RATES.has(name)) return { label: 'bytes per second', pattern: /\bbytes per second\b/ };
  if (name.endsWith('.ms')) return { label: 'milliseconds', pattern: /\bmilliseconds?\b/ };
  if (name.endsWith('.bytes') || BYTE_SIZED.has(name)) return { label: 'bytes', pattern: /\bbytes?\b/i };
  if (name.endsWith('.hours')) return { label: 'hours', pattern: /\bhours?\b/ };
  if (name.endsWith('.minutes')) return { label: 'minutes', pattern: /\bminutes?\b/ };
  if (name.endsWith('.seconds')) return { label: 'seconds', pattern: /\bseconds?\b/ };
  return null;
}

const STORE_TYPES = ['JKS', 'PKCS12', 'PEM'];
const SASL_MECHANISMS = ['GSSAPI', 'PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'];
const TLS_VERSIONS = ['TLSv1.2', 'TLSv1.3'];

/**
 * Keys whose values come from a set Kafka documents but does not validate (so no validator lists them): their
 * documentation names each value too. Keys with a fixed-set validator are found from it.
 */
const DOCUMENTED_VALUES: Readonly<Record<string, readonly string[]>> = {
  'ssl.keystore.type': STORE_TYPES,
  'ssl.truststore.type': STORE_TYPES,
  'zookeeper.ssl.keystore.type': STORE_TYPES,
  'zookeeper.ssl.truststore.type': STORE_TYPES,
  'sasl.enabled.mechanisms': SASL_MECHANISMS,
  'sasl.mechanism.inter.broker.protocol': SASL_MECHANISMS,
  'ssl.protocol': TLS_VERSIONS,
  'ssl.enabled.protocols': TLS_VERSIONS,
  'zookeeper.ssl.protocol': TLS_VERSIONS,
  'zookeeper.ssl.enabled.protocols': TLS_VERSIONS,
  'metrics.recording.level': ['INFO', 'DEBUG', 'TRACE'],
  'ssl.endpoint.identification.algorithm': ['https'],
  'listener.security.protocol.map': ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'],
  'offsets.topic.compression.codec': ['0', '1', '2', '3', '4'],
  'zookeeper.clientCnxnSocket': ['org.apache.zookeeper.ClientCnxnSocketNetty'],
};

function valuesOf(def: ConfigKeyDef): readonly string[] {
  return def.validator?.allowed ?? DOCUMENTED_VALUES[def.name] ?? [];
}

function layers(): BrokerConfigLayers {
  return { staticConfig: new Map(), dynamicDefault: new Map(), dynamicBroker: new Map() };
}

describe('config key documentation', () => {
  test('every key has a documentation sentence', () => {
    const bad = ALL_KEYS.filter((def) => !/^[A-Z0-9a-z].{19,}[.)]$/s.test(def.doc.trim())).map((d) => d.name);
    assert.deepEqual(bad, []);
  });

  test('every time and size key names its unit', () => {
    const missing: string[] = [];
    for (const def of ALL_KEYS) {
      const unit = unitOf(def.name);
      if (unit !== null && !unit.pattern.test(def.doc)) missing.push(`${def.name} (${unit.label})`);
    }
    assert.deepEqual(missing, []);
  });

  test('every key with a fixed set of values names each of them', () => {
    const missing: string[] = [];
    for (const def of ALL_KEYS) {
      for (const value of valuesOf(def)) {
        if (!def.doc.includes(value)) missing.push(`${def.name}: ${value}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  test('the keys listed without a validator exist, so the list cannot go stale', () => {
    for (const name of [...Object.keys(DOCUMENTED_VALUES), ...BYTE_SIZED, ...BYTE_RATES]) {
      assert.ok(BROKER_KEYS.has(name) || TOPIC_KEYS.has(name), name);
    }
  });

  test('DescribeConfigs returns that documentation for every broker and topic key', () => {
    const options = { keys: null, includeSynonyms: false, includeDocumentation: true };
    const broker = describeBrokerConfigs(layers(), true, options);
    const topic = describeTopicConfigs(new Map(), layers(), options);
    for (const [described, keys] of [
      [broker, BROKER_KEYS],
      [topic, TOPIC_KEYS],
    ] as const) {
      const docs = new Map(described.map((c) => [c.name, c.documentation]));
      for (const def of keys.values()) assert.equal(docs.get(def.name), def.doc, def.name);
    }
  });
});
