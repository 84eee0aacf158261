// Seeded mutation fuzzing of every zk-layout decoder: damaged bytes and damaged JSON must come back as a
// value (accepted or refused), never as an exception; and whatever is accepted must survive encode and decode
// unchanged, so that Brook never writes back something it cannot read.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BrokerId } from '../../../src/common/ids.js';
import {
  type Decoded,
  decodeBrokerRegistration,
  decodeClusterId,
  decodeConfigChange,
  decodeController,
  decodeControllerEpoch,
  decodeEntityConfig,
  decodeIsrChangeNotification,
  decodeLogDirEvent,
  decodePartitionState,
  decodeProducerIdBlock,
  decodeReassignPartitions,
  decodeTopicAssignment,
  encodeBrokerRegistration,
  encodeClusterId,
  encodeConfigChange,
  encodeController,
  encodeControllerEpoch,
  encodeEntityConfig,
  encodeIsrChangeNotification,
  encodeLogDirEvent,
  encodePartitionState,
  encodeProducerIdBlock,
  encodeReassignPartitions,
  encodeTopicAssignment,
} from '../../../src/controller/zk-layout/index.js';

const ROUNDS = 1500;

interface Codec {
  readonly name: string;
  readonly sample: string;
  decode(bytes: Uint8Array): Decoded<unknown>;
  encode(value: unknown): Uint8Array;
  /**
   * The decoder reads damaged input as a value, as Kafka's does (an entity config that is not JSON holds no
   * configs): only the round trip is checked, not that some mutations are refused.
   */
  readonly lenient?: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: each codec's value type differs; the table only moves values.
type Any = any;

const codecs: Codec[] = [
  {
    name: 'broker registration',
    sample:
      '{"features":{"metadata.version":{"min_version":1,"max_version":7}},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT","SSL":"SSL"},"endpoints":["PLAINTEXT://h:9092","SSL://[::1]:9093"],"rack":"r1","jmx_port":-1,"host":"h","port":9092,"timestamp":"1","version":5}',
    decode: (b) => decodeBrokerRegistration(1 as BrokerId, b),
    encode: (v) => encodeBrokerRegistration(v as Any),
  },
  {
    name: 'topic assignment',
    sample:
      '{"version":3,"topic_id":"k8Q4-5wHRrGkqZ6f9xOcyA","partitions":{"0":[1,2],"1":[2,3]},"adding_replicas":{"0":[2]},"removing_replicas":{}}',
    decode: decodeTopicAssignment,
    encode: (v) => encodeTopicAssignment(v as Any),
  },
  {
    name: 'partition state',
    sample:
      '{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":2,"isr":[1,2],"leader_recovery_state":1}',
    decode: decodePartitionState,
    encode: (v) => encodePartitionState(v as Any),
  },
  {
    name: 'controller',
    sample: '{"version":2,"brokerid":1,"timestamp":"17","kraftControllerEpoch":-1}',
    decode: decodeController,
    encode: (v) => encodeController(v as Any),
  },
  {
    name: 'controller epoch',
    sample: '42',
    decode: decodeControllerEpoch,
    encode: (v) => encodeControllerEpoch(v as number),
  },
  {
    name: 'cluster id',
    sample: '{"version":"1","id":"abc"}',
    decode: decodeClusterId,
    encode: (v) => encodeClusterId(v as string),
  },
  {
    name: 'entity config',
    sample: '{"version":1,"config":{"a":"1","b":"x"}}',
    decode: decodeEntityConfig,
    encode: (v) => encodeEntityConfig(v as Any),
    lenient: true,
  },
  {
    name: 'config change',
    sample: '{"version":2,"entity_path":"topics/t"}',
    decode: decodeConfigChange,
    encode: (v) => encodeConfigChange(v as Any),
  },
  {
    name: 'reassignment',
    sample: '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}',
    decode: decodeReassignPartitions,
    encode: (v) => encodeReassignPartitions(v as Any),
  },
  {
    name: 'ISR change',
    sample: '{"version":1,"partitions":[{"topic":"t","partition":0}]}',
    decode: decodeIsrChangeNotification,
    encode: (v) => encodeIsrChangeNotification(v as Any),
  },
  {
    name: 'log dir event',
    sample: '{"version":1,"broker":1,"event":1}',
    decode: decodeLogDirEvent,
    encode: (v) => encodeLogDirEvent(v as Any),
  },
  {
    name: 'producer id block',
    sample: '{"version":1,"broker":2,"block_start":"0","block_end":"999"}',
    decode: decodeProducerIdBlock,
    encode: (v) => encodeProducerIdBlock(v as Any),
  },
];

function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x100000000;
  };
}

const PIECES = [
  '"',
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  '-',
  '0',
  '9',
  '1e309',
  'null',
  'true',
  '"x"',
  '\\u0000',
  '.5',
  ' ',
];

function mutate(text: string, next: () => number): Uint8Array {
  const at = Math.floor(next() * (text.length + 1));
  const r = next();
  if (r < 0.3) return new TextEncoder().encode(text.slice(0, at) + text.slice(at + 1));
  if (r < 0.6) {
    const piece = PIECES[Math.floor(next() * PIECES.length)]!;
    return new TextEncoder().encode(text.slice(0, at) + piece + text.slice(at));
  }
  if (r < 0.8) return new TextEncoder().encode(text.slice(0, at));
  const bytes = new TextEncoder().encode(text);
  if (bytes.length > 0) bytes[Math.floor(next() * bytes.length)] = Math.floor(next() * 256);
  return bytes;
}

describe('zk-layout: decoders under mutation', () => {
  for (const [index, codec] of codecs.entries()) {
    it(`${codec.name}: damaged input is a value, and accepted input round-trips`, () => {
      const sample = codec.decode(new TextEncoder().encode(codec.sample));
      assert.ok(sample.ok, `the ${codec.name} sample itself decodes`);
      const next = random(1000 + index);
      let accepted = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const bytes = mutate(codec.sample, next);
        let decoded: Decoded<unknown>;
        try {
          decoded = codec.decode(bytes);
        } catch (e) {
          assert.fail(
            `${codec.name} threw on ${JSON.stringify(new TextDecoder().decode(bytes))}: ${String(e)}`,
          );
        }
        if (!decoded.ok) continue;
        accepted += 1;
        const again = codec.decode(codec.encode(decoded.value));
        assert.ok(again.ok, `${codec.name}: re-encoded value decodes`);
        assert.deepEqual(again.value, decoded.value);
      }
      if (codec.lenient !== true) assert.ok(accepted < ROUNDS, 'some mutations are refused');
    });
  }
});
