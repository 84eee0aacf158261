// Word count through a real broker: KafkaStreams creates its repartition and changelog topics with Kafka's
// names and configs, runs one task per input partition, writes counts as 8-byte big-endian longs that match a
// reference computed here; a clean restart resumes from its checkpoint files (LMDB stores kept), and an instance
// without local state restores the counts from the changelog; both count on.

import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  type KafkaStreamsState,
  Materialized,
  Produced,
  Serdes,
  StreamsBuilder,
} from '../../src/streams/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { leavingGroup, seeded, stateDir, TopicFollower } from './streams-helpers.js';

const PARTITIONS = 3;
const VOCABULARY = [
  'kafka',
  'streams',
  'brook',
  'topic',
  'log',
  'offset',
  'broker',
  'table',
  'window',
  'join',
];

function wordCountTopology() {
  const builder = new StreamsBuilder();
  builder
    .stream('text-lines', Consumed.with(Serdes.String(), Serdes.String()))
    .flatMapValues((line) =>
      line
        .toLowerCase()
        .split(/\W+/)
        .filter((w) => w.length > 0),
    )
    .groupBy((_key, word) => word)
    .count(Materialized.as('counts'))
    .toStream()
    .to('word-counts', Produced.with(Serdes.String(), Serdes.Long()));
  return builder.build();
}

function lines(seed: number, count: number): string[] {
  const random = seeded(seed);
  return Array.from({ length: count }, () => {
    const n = 1 + Math.floor(random() * 6);
    return Array.from({ length: n }, () => VOCABULARY[Math.floor(random() * VOCABULARY.length)]!).join(' ');
  });
}

function reference(all: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of all) for (const w of line.split(' ')) out.set(w, (out.get(w) ?? 0) + 1);
  return out;
}

function words(all: string[]): number {
  return all.reduce((n, l) => n + l.split(' ').length, 0);
}

function decoded(latest: Map<string, Buffer | null>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of latest) {
    assert.ok(v !== null && v.length === 8, `count of ${k} is not an 8-byte long`);
    out.set(k, Number(v.readBigInt64BE(0)));
  }
  return out;
}

describe('word count through a broker', () => {
  let broker: BrokerProcess;
  let bootstrap = '';
  const dir = stateDir();

  before(async () => {
    broker = await startBroker();
    bootstrap = broker.bootstrap;
    const admin = new Admin({ bootstrapServers: bootstrap });
    await admin.createTopics([
      { topic: 'text-lines', numPartitions: PARTITIONS, replicationFactor: 1 },
      { topic: 'word-counts', numPartitions: PARTITIONS, replicationFactor: 1 },
    ]);
    await admin.close();
  });

  after(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function produce(batch: string[], offset: number): Promise<void> {
    const producer = new Producer({ bootstrapServers: bootstrap });
    await producer.sendBatch(
      batch.map((line, i) => ({
        topic: 'text-lines',
        key: Buffer.from(`line-${offset + i}`),
        value: Buffer.from(line),
      })),
    );
    await producer.close();
  }

  it('counts words matching a reference, resumes from checkpoints after a clean restart, and restores from the changelog without local state', async () => {
    const first = lines(18, 400);
    await produce(first, 0);

    const states: string[] = [];
    const streams = new KafkaStreams(wordCountTopology(), {
      'application.id': 'wordcount',
      'bootstrap.servers': bootstrap,
      'commit.interval.ms': 200,
      'state.dir': dir,
    });
    streams.setStateListener((next: KafkaStreamsState, old: KafkaStreamsState) =>
      states.push(`${old}->${next}`),
    );
    if (process.env.STREAMS_DEBUG) streams.setLogger((m) => console.error(m));
    const follower = new TopicFollower(bootstrap, 'word-counts', PARTITIONS);
    follower.start();
    try {
      await streams.start();
      const expected = reference(first);
      await waitUntil(
        () =>
          follower.latest.size === expected.size &&
          [...expected].every(([w, n]) => follower.latest.get(w)?.readBigInt64BE(0) === BigInt(n)),
        60_000,
        () =>
          `counts so far: ${JSON.stringify([...decoded(follower.latest)])}, expected ${JSON.stringify([...expected])}; processed ${streams.processedRecords()}, read ${follower.records.length}`,
      );
      assert.deepEqual(decoded(follower.latest), expected);
      assert.equal(streams.state(), 'RUNNING');

      // The internal topics, with Kafka's names, partition counts and cleanup policies.
      const admin = new Admin({ bootstrapServers: bootstrap });
      try {
        const topics = await admin.describeTopics([
          'wordcount-counts-repartition',
          'wordcount-counts-changelog',
        ]);
        assert.deepEqual(
          topics.map((t) => [t.topic, t.error, t.partitions.length]),
          [
            ['wordcount-counts-repartition', null, PARTITIONS],
            ['wordcount-counts-changelog', null, PARTITIONS],
          ],
        );
        const [changelogConfig, repartitionConfig] = await admin.describeConfigs([
          { type: 'topic', name: 'wordcount-counts-changelog', keys: ['cleanup.policy'] },
          { type: 'topic', name: 'wordcount-counts-repartition', keys: ['cleanup.policy'] },
        ]);
        assert.equal(changelogConfig!.configs.find((c) => c.name === 'cleanup.policy')?.value, 'compact');
        assert.equal(repartitionConfig!.configs.find((c) => c.name === 'cleanup.policy')?.value, 'delete');
        // Consumer group = application.id, with the input offsets committed.
        const offsets = await admin.listConsumerGroupOffsets('wordcount');
        const committed = offsets.filter((o) => o.topic === 'text-lines').reduce((n, o) => n + o.offset, 0);
        assert.equal(committed, first.length);
      } finally {
        await admin.close();
      }
    } finally {
      await streams.close();
    }
    assert.deepEqual(states, [
      'CREATED->REBALANCING',
      'REBALANCING->RUNNING',
      'RUNNING->PENDING_SHUTDOWN',
      'PENDING_SHUTDOWN->NOT_RUNNING',
    ]);

    // Clean close: each task of sub-topology 1 (the counts) left a checkpoint in Kafka's format.
    const checkpoint = readFileSync(join(dir, 'wordcount', '1_0', '.checkpoint'), 'utf8').split('\n');
    assert.deepEqual(checkpoint.slice(0, 2), ['0', '1']);
    assert.match(checkpoint[2]!, /^wordcount-counts-changelog 0 \d+$/);

    // A new instance on the same state directory starts from the checkpoints: nothing to restore, and it counts on.
    const third = lines(81, 300);
    await produce(third, first.length);
    await runUntilCounts([...first, ...third], dir, (s) => {
      assert.equal(s.restoredRecords(), 0, 'a clean restart replayed the changelog');
      assert.equal(s.processedRecords(), third.length + words(third));
    });

    // On a machine without the state (a fresh state directory), the stores come back from the changelogs.
    const fresh = stateDir();
    const fourth = lines(7, 200);
    await produce(fourth, first.length + third.length);
    try {
      await runUntilCounts([...first, ...third, ...fourth], fresh, (s) => {
        assert.ok(
          s.restoredRecords() >= reference([...first, ...third]).size,
          'the changelog was not restored',
        );
        assert.equal(s.processedRecords(), fourth.length + words(fourth));
      });
    } finally {
      rmSync(fresh, { recursive: true, force: true });
      await follower.stop();
    }

    async function runUntilCounts(all: string[], stateDirectory: string, check: (s: KafkaStreams) => void) {
      const streams = new KafkaStreams(wordCountTopology(), {
        'application.id': 'wordcount',
        'bootstrap.servers': bootstrap,
        'commit.interval.ms': 200,
        'state.dir': stateDirectory,
      });
      if (process.env.STREAMS_DEBUG) streams.setLogger((m) => console.error(m));
      try {
        await streams.start();
        const expected = reference(all);
        await waitUntil(
          () => [...expected].every(([w, n]) => follower.latest.get(w)?.readBigInt64BE(0) === BigInt(n)),
          60_000,
          () =>
            `counts so far: ${JSON.stringify([...decoded(follower.latest)])}, expected ${JSON.stringify([...expected])}; processed ${streams.processedRecords()}, restored ${streams.restoredRecords()}`,
        );
        assert.deepEqual(decoded(follower.latest), expected);
        check(streams);
      } finally {
        await streams.close(leavingGroup());
      }
    }
  });
});
