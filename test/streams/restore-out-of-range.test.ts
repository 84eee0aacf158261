// A task whose checkpoint points before its changelog's first offset (records deleted while the instance was
// away) cannot resume from it: Kafka's restore consumer runs with auto.offset.reset "none" and the out-of-range
// offset marks the task corrupted: its changelog offsets are dropped and it is closed dirty, which wipes its state
// directory only under exactly-once (StateManagerUtil.closeStateManager). Under at_least_once a persistent store
// keeps its contents and the changelog is replayed from its first offset over them. The same when the records go
// while the task restores: the restore consumer's next fetch is out of range.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { KafkaStreams, type ProcessingGuarantee, type StreamsProperties } from '../../src/streams/index.js';
import { truncateChangelog, truncateChangelogNow } from '../helpers/truncate-changelog.js';
import { waitUntil } from '../helpers/wait.js';
import {
  countByKeyTopology,
  leavingGroup,
  type StreamsBroker,
  TopicFollower,
  useStreamsBroker,
} from './streams-helpers.js';

const APP = 'oor';

function start(env: StreamsBroker, app = APP, extra: StreamsProperties = {}): KafkaStreams {
  return new KafkaStreams(countByKeyTopology(`${app}-in`, `${app}-out`, 'counts'), {
    'application.id': app,
    'bootstrap.servers': env.bootstrap,
    'state.dir': env.dirs[app.startsWith('oor-mid') ? 1 : 0]!,
    ...extra,
    'commit.interval.ms': 100,
    // One changelog record and one output per input record.
    'statestore.cache.max.bytes': 0,
  });
}

describe('restoring from a changelog whose records before the checkpoint are gone', () => {
  const env = useStreamsBroker(
    {
      'oor-in': 1,
      'oor-out': 1,
      'oor-eos-in': 1,
      'oor-eos-out': 1,
      'oor-mid-in': 1,
      'oor-mid-out': 1,
      'oor-mid-eos-in': 1,
      'oor-mid-eos-out': 1,
    },
    2,
  );

  /** The counts of a before the instance goes away and after it comes back to a changelog truncated to its end. */
  async function countsAfterTruncationWhileAway(
    app: string,
    guarantee: ProcessingGuarantee,
  ): Promise<string[]> {
    const changelog = `${app}-counts-changelog`;
    const eos = { 'processing.guarantee': guarantee };
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const admin = new Admin({ bootstrapServers: env.bootstrap });
    const follower = new TopicFollower(env.bootstrap, `${app}-out`, 1);
    follower.start();
    const counts = () => follower.records.map((r) => `${r.key}=${r.value?.readBigInt64BE(0)}`);
    try {
      const first = start(env, app, eos);
      await first.start();
      for (const _ of [1, 2, 3])
        await producer.send({ topic: `${app}-in`, key: Buffer.from('a'), value: Buffer.from('x') });
      await waitUntil(
        () => follower.records.length >= 3,
        30_000,
        () => counts().join(' '),
      );
      await first.close(leavingGroup());
      // While the instance is away the changelog moves on and its records are deleted up to its end: the
      // checkpoint (offset 2, or later under exactly-once with its commit markers) now lies before the first offset.
      await producer.send({ topic: changelog, key: Buffer.from('b'), value: Buffer.alloc(8) });
      const [end] = await admin.listOffsets([{ topic: changelog, partition: 0, spec: 'latest' }]);
      const lowWatermark = await truncateChangelog(admin, changelog, end!.offset);
      if (guarantee === 'at_least_once')
        assert.equal(lowWatermark, 4, 'three counts and the record written here, all deleted');

      const second = start(env, app, eos);
      const logs: string[] = [];
      second.setLogger((m) => logs.push(m));
      await second.start();
      await producer.send({ topic: `${app}-in`, key: Buffer.from('a'), value: Buffer.from('x') });
      await waitUntil(
        () => follower.records.length >= 4,
        30_000,
        () => counts().join(' '),
      );
      assert.ok(
        logs.some((m) =>
          /checkpointed offset \d+ .* is before its first offset \d+: the task is corrupted/.test(m),
        ),
        logs.join('\n'),
      );
      await second.close();
      return counts();
    } finally {
      await follower.stop();
      await admin.close();
      await producer.close();
    }
  }

  it('under at_least_once keeps the store and replays the changelog from its first offset over it', async () => {
    // The changelog holds nothing for a any more; the store's old count stays: 4, as Kafka counts on.
    assert.deepEqual(await countsAfterTruncationWhileAway(APP, 'at_least_once'), [
      'a=1',
      'a=2',
      'a=3',
      'a=4',
    ]);
  });

  it('under exactly_once_v2 wipes the task state and restores what the changelog holds', async () => {
    // Kafka's count starts again from what the changelog holds (nothing for a): 1, not 4.
    assert.deepEqual(await countsAfterTruncationWhileAway('oor-eos', 'exactly_once_v2'), [
      'a=1',
      'a=2',
      'a=3',
      'a=1',
    ]);
  });

  /**
   * The counts of a when its changelog is truncated while the task restores (a's counts deleted), with the restore
   * listener's start and end, and the thread's log.
   */
  async function countsAfterTruncationWhileRestoring(app: string, guarantee: ProcessingGuarantee) {
    const eos = { 'processing.guarantee': guarantee };
    const changelog = `${app}-counts-changelog`;
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const follower = new TopicFollower(env.bootstrap, `${app}-out`, 1);
    follower.start();
    const counts = () => follower.records.map((r) => `${r.key}=${r.value?.readBigInt64BE(0)}`);
    const admin = new Admin({ bootstrapServers: env.bootstrap });
    const appended = 600;
    try {
      const first = start(env, app, eos);
      await first.start();
      for (const _ of [1, 2, 3])
        await producer.send({ topic: `${app}-in`, key: Buffer.from('a'), value: Buffer.from('x') });
      await waitUntil(
        () => follower.records.length >= 3,
        30_000,
        () => counts().join(' '),
      );
      await first.close(leavingGroup());
      // Three counts (and, under exactly-once, commit markers).
      const [base] = await admin.listOffsets([{ topic: changelog, partition: 0, spec: 'latest' }]);
      const deleteBefore = base!.offset + appended / 2;
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
        ...eos,
        'restore.consumer.fetch.max.bytes': 1,
        'restore.consumer.max.partition.fetch.bytes': 1,
      });
      const restoring: string[] = [];
      second.setGlobalStateRestoreListener({
        onRestoreStart: (tp, store, startingOffset, endingOffset) => {
          restoring.push(`start ${tp.topic}-${tp.partition} ${store} ${startingOffset}-${endingOffset}`);
          // Synchronously, before the first fetch's answer is applied: the records before `deleteBefore` go, a's
          // counts among them, while the restore consumer's position is still at the checkpoint.
          truncateChangelogNow(env.bootstrap, changelog, deleteBefore);
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
      return { counts: counts(), restoring, logs, base: base!.offset, deleteBefore };
    } finally {
      await follower.stop();
      await admin.close();
      await producer.close();
    }
  }

  it('under at_least_once keeps a store truncated while it restores, replaying the rest', async () => {
    const app = 'oor-mid';
    const changelog = `${app}-counts-changelog`;
    const { counts, restoring, logs, base, deleteBefore } = await countsAfterTruncationWhileRestoring(
      app,
      'at_least_once',
    );
    const appended = 600;
    // Started at the checkpoint; ended having restored, from the new first offset, the records the changelog holds.
    assert.deepEqual(restoring, [
      `start ${changelog}-0 counts 3-${base + appended}`,
      `end ${changelog}-0 counts ${base + appended - deleteBefore}`,
    ]);
    // The store keeps a's old count (Kafka wipes only under exactly-once): the next count is 4.
    assert.deepEqual(counts, ['a=1', 'a=2', 'a=3', 'a=4'], logs.join('\n'));
    assert.ok(
      logs.some((m) => /before its first offset \d+ \(the changelog was truncated\)/.test(m)),
      logs.join('\n'),
    );
  });

  it('under exactly_once_v2 wipes a store whose changelog is truncated while it restores', async () => {
    const app = 'oor-mid-eos';
    const changelog = `${app}-counts-changelog`;
    const { counts, restoring, logs, base, deleteBefore } = await countsAfterTruncationWhileRestoring(
      app,
      'exactly_once_v2',
    );
    const appended = 600;
    assert.equal(restoring.at(-1), `end ${changelog}-0 counts ${base + appended - deleteBefore}`);
    // Restoring on from the new first offset over a's old count would give 4; the wiped store counts from 1.
    assert.deepEqual(counts, ['a=1', 'a=2', 'a=3', 'a=1'], logs.join('\n'));
    assert.ok(
      logs.some((m) => /before its first offset \d+ \(the changelog was truncated\)/.test(m)),
      logs.join('\n'),
    );
  });
});
