// Go clients against a Brook broker: Sarama 1.22 and segmentio/kafka-go 0.2.1, as Debian packages them. The
// programs in test/compat/go do the work and print a JSON summary; this file builds them (once per source
// change), runs them, and judges the summaries.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { buildGoPrograms, type GoPrograms } from './go/build.js';

const CODECS_KAFKA_READS_BACK = ['none', 'gzip', 'snappy', 'lz4'];

interface SaramaSummary {
  version: string;
  brokers: string[];
  controller: number;
  createdTopics: Record<string, number>;
  headers: boolean;
  codecs: Record<
    string,
    { produced: number; consumed: number; partitions?: Record<string, number>; errorCode?: number }
  >;
  offsetsForTimes: Record<string, number>;
  group: {
    consumed: number;
    committed: Record<string, number>;
    highWater: Record<string, number>;
    listed: boolean;
    state: string;
  };
  idempotent?: {
    produced: number;
    consumed: number;
    producerId: number;
    producerEpoch: number;
    firstSequences: number[];
    records: number[];
  };
  deletedTopicGone: boolean;
}

interface KafkaGoSummary {
  partitions: Record<string, number>;
  codecs: Record<string, number>;
  offsetsForTimes: Record<string, number>;
  group: { consumed: number; resumedAt: number };
}

describe('Go clients (Sarama, kafka-go) against a Brook broker', () => {
  let programs: GoPrograms;
  let broker: BrokerProcess;
  before(
    async () => {
      programs = await buildGoPrograms();
      if (programs.built) console.log(`built the Go programs in ${programs.buildMs} ms`);
      broker = await startBroker();
    },
    { timeout: 360_000 },
  );
  after(async () => {
    await broker?.stop();
  });

  async function runProgram(name: string, args: string[]): Promise<unknown> {
    const r = await run(programs.binaries[name]!, [broker.bootstrap, ...args], { timeoutMs: 150_000 });
    assert.equal(r.code, 0, `${name} failed:\n${r.stderr}\n--- broker log ---\n${broker.log()}`);
    return JSON.parse(r.stdout.trim().split('\n').pop()!);
  }

  /** What both Sarama runs must show, whichever Kafka version Sarama was told to speak. */
  function assertSaramaRoundTrips(out: SaramaSummary, prefix: string): void {
    assert.deepEqual(out.brokers, [`0@${broker.bootstrap}`]);
    assert.equal(out.controller, 0);
    for (const codec of [...CODECS_KAFKA_READS_BACK, 'zstd']) {
      assert.equal(out.createdTopics[`${prefix}-${codec}`], 2, `${codec}: CreateTopics made two partitions`);
    }
    for (const codec of CODECS_KAFKA_READS_BACK) {
      const c = out.codecs[codec]!;
      assert.equal(c.produced, 30, codec);
      assert.equal(
        c.consumed,
        30,
        `${codec}: every record read back with its key, value, timestamp, headers`,
      );
      const perPartition = Object.values(c.partitions!);
      assert.equal(perPartition.length, 2, `${codec}: keys spread over both partitions`);
    }
    // Sarama 1.22 sends zstd in Produce v3 (magic 2) or v2 (magic 1); Kafka takes zstd only from Produce v7, and
    // answers UNSUPPORTED_COMPRESSION_TYPE, since such an old client could not read the records back.
    assert.equal(out.codecs.zstd!.errorCode, 76);
    assert.equal(out.codecs.zstd!.produced, 0);
    // Records at base+0s, +1s (batches of their own), +2s, +3s (one batch): ListOffsets v1 by time.
    assert.deepEqual(out.offsetsForTimes, {
      earliest: 0,
      latest: 4,
      first: 0,
      between0and1: 1,
      between2and3: 3,
      last: 3,
      afterAll: -1,
    });
    assert.equal(out.group.consumed, 60);
    assert.equal(Object.keys(out.group.highWater).length, 4);
    assert.deepEqual(
      out.group.committed,
      out.group.highWater,
      'the group committed every partition to its end',
    );
    assert.equal(out.group.listed, true);
    assert.equal(out.group.state, 'Empty', 'the only member left');
    assert.equal(out.deletedTopicGone, true);
  }

  it('Sarama as a Kafka 2.1 client: admin, every codec with headers, offsets by time, a consumer group, an idempotent producer', async () => {
    const out = (await runProgram('sarama-check', ['sarama-new', '2.1.0'])) as SaramaSummary;
    assert.equal(out.version, '2.1.0');
    assert.equal(out.headers, true);
    assertSaramaRoundTrips(out, 'sarama-new');
    const idem = out.idempotent!;
    assert.equal(out.createdTopics['sarama-new-idempotent'], 1);
    assert.equal(idem.produced, 30);
    assert.equal(idem.consumed, 30);
    assert.ok(idem.producerId >= 0, 'the stored batches carry the producer id InitProducerId gave');
    assert.equal(idem.producerEpoch, 0);
    // Sequences continue from batch to batch with no gap: each batch starts where the previous one ended.
    assert.equal(
      idem.records.reduce((a, b) => a + b, 0),
      30,
    );
    assert.deepEqual(
      idem.firstSequences,
      idem.records.map((_, i) => idem.records.slice(0, i).reduce((a, b) => a + b, 0)),
    );
  });

  it('Sarama as a Kafka 0.10.2 client: the same with old request versions and magic 1 message sets', async () => {
    const out = (await runProgram('sarama-check', ['sarama-old', '0.10.2.0'])) as SaramaSummary;
    assert.equal(out.version, '0.10.2.0');
    assert.equal(out.headers, false);
    assertSaramaRoundTrips(out, 'sarama-old');
    assert.equal(out.idempotent, undefined, 'idempotence needs Kafka 0.11');
  });

  it('kafka-go 0.2.1: CreateTopics v0, Produce and Fetch v2 with every codec it has, offsets by time, a group that resumes at its commit', async () => {
    const out = (await runProgram('kafka-go-check', ['kafka-go'])) as KafkaGoSummary;
    for (const t of ['times', 'group', ...CODECS_KAFKA_READS_BACK]) {
      assert.equal(out.partitions[`kafka-go-${t}`], 2, t);
    }
    for (const codec of CODECS_KAFKA_READS_BACK) {
      assert.equal(out.codecs[codec], 30, `${codec}: every record read back at its offset with key and time`);
    }
    assert.deepEqual(out.offsetsForTimes, {
      earliest: 0,
      latest: 4,
      first: 0,
      between0and1: 1,
      between2and3: 3,
      afterAll: -1,
    });
    assert.equal(out.group.consumed, 20);
    assert.ok(out.group.resumedAt > 0, 'the second member started after the records the first one committed');
  });
});
