// `brook streams-application-reset` (kafka-streams-application-reset) against a broker and a word count that has
// run: refused while an instance is active; --dry-run changes nothing; a reset moves the group's input offsets
// to the beginning and deletes the repartition and changelog topics, so that the application, with its local
// state cleaned up (KafkaStreams.cleanUp), reprocesses its input and ends at the same counts (not doubled).

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  Materialized,
  Produced,
  Serdes,
  StreamsBuilder,
} from '../../src/streams/index.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { leavingGroup, stateDir, TopicFollower } from './streams-helpers.js';

const BROOK = resolve(import.meta.dirname, '../../../bin/brook');
const APP = 'reset-app';

function topology() {
  const builder = new StreamsBuilder();
  builder
    .stream('reset-in', Consumed.with(Serdes.String(), Serdes.String()))
    .flatMapValues((l) => l.split(' '))
    .groupBy((_k, w) => w)
    .count(Materialized.as('counts'))
    .toStream()
    .to('reset-out', Produced.with(Serdes.String(), Serdes.Long()));
  return builder.build();
}

describe('streams-application-reset', () => {
  let broker: BrokerProcess;
  let bootstrap = '';
  const dir = stateDir();
  const brook = (args: string[]) =>
    run(process.execPath, [BROOK, 'streams-application-reset', ...args], { timeoutMs: 60_000 });

  before(async () => {
    broker = await startBroker();
    bootstrap = broker.bootstrap;
    const admin = new Admin({ bootstrapServers: bootstrap });
    await admin.createTopics([
      { topic: 'reset-in', numPartitions: 2, replicationFactor: 1 },
      { topic: 'reset-out', numPartitions: 1, replicationFactor: 1 },
    ]);
    await admin.close();
  });

  after(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('resets input offsets and deletes internal topics, and the application reprocesses to the same counts', async () => {
    const lines = Array.from({ length: 60 }, (_, i) => `w${i % 5} w${i % 3}`);
    const expected = new Map<string, number>();
    for (const l of lines) for (const w of l.split(' ')) expected.set(w, (expected.get(w) ?? 0) + 1);
    const producer = new Producer({ bootstrapServers: bootstrap });
    await producer.sendBatch(
      lines.map((l, i) => ({ topic: 'reset-in', key: Buffer.from(`k${i}`), value: Buffer.from(l) })),
    );
    await producer.close();
    const follower = new TopicFollower(bootstrap, 'reset-out', 1);
    follower.start();
    const admin = new Admin({ bootstrapServers: bootstrap });
    const props = {
      'application.id': APP,
      'bootstrap.servers': bootstrap,
      'state.dir': dir,
      'commit.interval.ms': 100,
    };
    const finalCounts = () =>
      [...expected].every(([w, n]) => follower.latest.get(w)?.readBigInt64BE(0) === BigInt(n));
    const internalTopics = async () =>
      (await admin.listTopics()).filter((t) => t.startsWith(`${APP}-`)).sort();
    try {
      let streams = new KafkaStreams(topology(), props);
      await streams.start();
      await waitUntil(finalCounts, 60_000, () => 'first run not done');
      let r = await brook([
        '--bootstrap-server',
        bootstrap,
        '--application-id',
        APP,
        '--input-topics',
        'reset-in',
      ]);
      assert.equal(r.code, 1, 'refused while an instance is in the group');
      assert.match(r.stderr, /Consumer group 'reset-app' is still active/);
      await streams.close(leavingGroup());
      const internal = await internalTopics();
      assert.deepEqual(internal, [`${APP}-counts-changelog`, `${APP}-counts-repartition`]);
      const committedBefore = await admin.listConsumerGroupOffsets(APP);
      assert.ok(committedBefore.some((o) => o.topic === 'reset-in' && o.offset > 0));

      r = await brook([
        '--bootstrap-server',
        bootstrap,
        '--application-id',
        APP,
        '--input-topics',
        'reset-in',
        '--dry-run',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /----Dry run----/);
      assert.match(r.stdout, /Topic: reset-in Partition: 0 Offset: 0/);
      assert.match(r.stdout, new RegExp(`Deleting inferred internal topics \\[${internal.join(', ')}\\]`));
      assert.deepEqual(await internalTopics(), internal, 'a dry run deletes nothing');

      r = await brook([
        '--bootstrap-server',
        bootstrap,
        '--application-id',
        APP,
        '--input-topics',
        'reset-in',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /Following input topics offsets will be reset to \(for consumer group reset-app\)/,
      );
      const committed = await admin.listConsumerGroupOffsets(APP);
      for (const o of committed.filter((c) => c.topic === 'reset-in')) assert.equal(o.offset, 0);
      assert.deepEqual(
        committed.filter((c) => c.topic.startsWith(`${APP}-`) && c.offset >= 0),
        [],
        'no offsets left on the internal topics',
      );
      const deadline = Date.now() + 30_000;
      while ((await internalTopics()).length > 0 && Date.now() < deadline)
        await new Promise((res) => setTimeout(res, 200));
      assert.deepEqual(await internalTopics(), []);

      // Reprocess from scratch: the counts come out the same, not added to the old ones.
      const before = follower.records.length;
      streams = new KafkaStreams(topology(), props);
      streams.cleanUp();
      await streams.start();
      try {
        await waitUntil(
          () =>
            streams.processedRecords() >= lines.length && follower.records.length > before && finalCounts(),
          60_000,
          () =>
            `processed ${streams.processedRecords()}; ${[...follower.latest].map(([k, v]) => `${k}=${v?.readBigInt64BE(0)}`).join(' ')}`,
        );
        await new Promise((res) => setTimeout(res, 500));
        assert.ok(finalCounts(), 'the counts are the reference again, not doubled');
      } finally {
        await streams.close();
      }
    } finally {
      await follower.stop();
      await admin.close();
    }
  });
});
