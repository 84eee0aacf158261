// A task whose checkpoint points before its changelog's first offset (records deleted while the instance was
// away) cannot resume from it: Kafka's restore consumer runs with auto.offset.reset "none", the out-of-range offset
// marks the task corrupted, and its state is wiped and restored from what the changelog still holds. Restoring
// from the changelog's start over the old files instead would keep values the changelog no longer has. The same
// when the records go while the task restores: the restore consumer's next fetch is out of range.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { KafkaStreams, type StreamsProperties } from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import {
  countByKeyTopology,
  leavingGroup,
  type StreamsBroker,
  TopicFollower,
  useStreamsBroker,
} from './streams-helpers.js';

const APP = 'oor';
const CHANGELOG = `${APP}-counts-changelog`;

function start(env: StreamsBroker, app = APP, extra: StreamsProperties = {}): KafkaStreams {
  return new KafkaStreams(countByKeyTopology(`${app}-in`, `${app}-out`, 'counts'), {
    'application.id': app,
    'bootstrap.servers': env.bootstrap,
    'state.dir': env.dirs[app === APP ? 0 : 1]!,
    ...extra,
    'commit.interval.ms': 100,
    // One changelog record and one output per input record.
    'statestore.cache.max.bytes': 0,
  });
}

describe('restoring from a changelog whose records before the checkpoint are gone', () => {
  const env = useStreamsBroker({ 'oor-in': 1, 'oor-out': 1, 'oor-mid-in': 1, 'oor-mid-out': 1 }, 2);

  it('wipes the task state and restores what the changelog holds', async () => {
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const admin = new Admin({ bootstrapServers: env.bootstrap });
    const follower = new TopicFollower(env.bootstrap, 'oor-out', 1);
    follower.start();
    const counts = () => follower.records.map((r) => `${r.key}=${r.value?.readBigInt64BE(0)}`);
    try {
      const first = start(env);
      await first.start();
      for (const _ of [1, 2, 3])
        await producer.send({ topic: 'oor-in', key: Buffer.from('a'), value: Buffer.from('x') });
      await waitUntil(
        () => follower.records.length >= 3,
        30_000,
        () => counts().join(' '),
      );
      await first.close(leavingGroup());
      // While the instance is away the changelog moves on and its records are deleted up to its end: the
      // checkpoint (offset 2) now lies before the first offset (4).
      await producer.send({ topic: CHANGELOG, key: Buffer.from('b'), value: Buffer.alloc(8) });
      const [end] = await admin.listOffsets([{ topic: CHANGELOG, partition: 0, spec: 'latest' }]);
      const [deleted] = await admin.deleteRecords([{ topic: CHANGELOG, partition: 0, offset: end!.offset }]);
      assert.equal(deleted!.lowWatermark, 4, 'three counts and the record written here, all deleted');

      const second = start(env);
      await second.start();
      await producer.send({ topic: 'oor-in', key: Buffer.from('a'), value: Buffer.from('x') });
      await waitUntil(
        () => follower.records.length >= 4,
        30_000,
        () => counts().join(' '),
      );
      await second.close();
      // Kafka's count starts again from what the changelog holds (nothing for a): 1, not 4.
      assert.deepEqual(counts(), ['a=1', 'a=2', 'a=3', 'a=1']);
    } finally {
      await follower.stop();
      await admin.close();
      await producer.close();
    }
  });

  it('wipes a store whose changelog is truncated while it restores, and restores what is left', async () => {
    const app = 'oor-mid';
    const changelog = `${app}-counts-changelog`;
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const follower = new TopicFollower(env.bootstrap, `${app}-out`, 1);
    follower.start();
    const counts = () => follower.records.map((r) => `${r.key}=${r.value?.readBigInt64BE(0)}`);
    const appended = 600;
    const deleteBefore = 3 + appended / 2;
    try {
      const first = start(env, app);
      await first.start();
      for (const _ of [1, 2, 3])
        await producer.send({ topic: `${app}-in`, key: Buffer.from('a'), value: Buffer.from('x') });
      await waitUntil(
        () => follower.records.length >= 3,
        30_000,
        () => counts().join(' '),
      );
      await first.close(leavingGroup());
      // While the instance is away the changelog gets more records (checkpoint 2 stays valid: nothing is deleted
      // yet), each in a batch of its own, so that restoring them takes one fetch each.
      for (let i = 0; i < appended; i++)
        await producer.send({
          topic: changelog,
          partition: 0,
          key: Buffer.from(`k${i}`),
          value: Buffer.alloc(8),
        });

      const second = start(env, app, {
        'restore.consumer.fetch.max.bytes': 1,
        'restore.consumer.max.partition.fetch.bytes': 1,
      });
      const restoring: string[] = [];
      second.setGlobalStateRestoreListener({
        onRestoreStart: (tp, store, startingOffset, endingOffset) => {
          restoring.push(`start ${tp.topic}-${tp.partition} ${store} ${startingOffset}-${endingOffset}`);
          // Synchronously, before the first fetch's answer is applied: the records before `deleteBefore` go, a's
          // counts among them, while the restore consumer's position is still at the checkpoint.
          const admin = fileURLToPath(new URL('../../src/client/admin.js', import.meta.url));
          const script =
            `import { Admin } from ${JSON.stringify(admin)};` +
            `const a = new Admin({ bootstrapServers: ${JSON.stringify(env.bootstrap)} });` +
            `const [r] = await a.deleteRecords([{ topic: ${JSON.stringify(changelog)}, partition: 0, ` +
            `offset: ${deleteBefore} }]);` +
            'await a.close(); if (r.error) { console.error(r.error); process.exit(1); }';
          const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
            encoding: 'utf8',
          });
          assert.equal(run.status, 0, run.stderr);
        },
        onBatchRestored: () => {},
        onRestoreEnd: (tp, store, total) =>
          restoring.push(`end ${tp.topic}-${tp.partition} ${store} ${total}`),
      });
      const logs: string[] = [];
      second.setLogger((m) => logs.push(m));
      await second.start();
      await producer.send({ topic: `${app}-in`, key: Buffer.from('a'), value: Buffer.from('x') });
      await waitUntil(
        () => follower.records.length >= 4,
        30_000,
        () => `${counts().join(' ')}\n${logs.join('\n')}`,
      );
      await second.close();
      // Started at the checkpoint; ended having restored, after the wipe, the records the changelog still holds.
      assert.deepEqual(restoring, [
        `start ${changelog}-0 counts 3-${3 + appended}`,
        `end ${changelog}-0 counts ${3 + appended - deleteBefore}`,
      ]);
      // Restoring on from the new first offset over a's old count would give 4; the wiped store counts from 1.
      assert.deepEqual(counts(), ['a=1', 'a=2', 'a=3', 'a=1'], logs.join('\n'));
      assert.ok(
        logs.some((m) => /before its first offset \d+ \(the changelog was truncated\)/.test(m)),
        logs.join('\n'),
      );
    } finally {
      await follower.stop();
      await producer.close();
    }
  });
});
