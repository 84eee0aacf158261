// A standby task whose checkpoint points before its changelog's first offset (records deleted while its instance
// was away): Kafka's standbys read their changelogs with the restore consumer, auto.offset.reset "none", so the
// out-of-range position marks the standby corrupted and its state is rebuilt from what the changelog still holds.
// Jumping to the first offset over the old state instead would keep values the changelog no longer has, and a
// failover would serve them.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  type KafkaStreams,
  QueryableStoreTypes,
  StoreQueryParameters,
  KafkaStreams as Streams,
} from '../../src/streams/index.js';
import { untilValue, waitUntil } from '../helpers/wait.js';
import {
  activeTasks,
  changelogEnd,
  countByKeyTopology,
  describeInstances,
  leavingGroup,
  useStreamsBroker,
} from './streams-helpers.js';

const APP = 'sboor';
const CHANGELOG = `${APP}-counts-changelog`;

describe('a standby whose changelog records after its checkpoint are gone', () => {
  const env = useStreamsBroker({ [`${APP}-in`]: 1, [`${APP}-out`]: 1 }, 2);

  function instance(dir: string): KafkaStreams {
    return new Streams(countByKeyTopology(`${APP}-in`, `${APP}-out`, 'counts'), {
      'application.id': APP,
      'bootstrap.servers': env.bootstrap,
      'state.dir': dir,
      'num.standby.replicas': 1,
      // b, back with a lagging checkpoint, is not caught up: the task stays active on a, b gets the standby.
      'acceptable.recovery.lag': 0,
      'commit.interval.ms': 100,
      // One changelog record per input record.
      'statestore.cache.max.bytes': 0,
      'session.timeout.ms': 6000,
      'heartbeat.interval.ms': 500,
    });
  }

  it('wipes the standby state and rebuilds it from the changelog', async () => {
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const admin = new Admin({ bootstrapServers: env.bootstrap });
    const a = instance(env.dirs[0]!);
    let b = instance(env.dirs[1]!);
    const send = (key: string) =>
      producer.send({ topic: `${APP}-in`, key: Buffer.from(key), value: Buffer.from('x') });
    const logs: string[] = [];
    try {
      await a.start();
      await waitUntil(
        () => a.state() === 'RUNNING' && activeTasks(a).length === 1,
        30_000,
        () => describeInstances(a, b),
      );
      // Counted before b joins: b, with no state, lags the changelog and gets the standby.
      for (const _ of [1, 2, 3]) await send('a');
      await untilValue('the three counts in the changelog', async () =>
        (await changelogEnd(env.bootstrap, CHANGELOG, 0)) >= 3 ? true : null,
      );
      await b.start();
      await waitUntil(
        () =>
          b.state() === 'RUNNING' && b.standbyTaskIds().join() === '0_0' && activeTasks(a).join() === '0_0',
        60_000,
        () => describeInstances(a, b),
      );
      await waitUntil(
        () => b.standbyRecords() >= 3,
        30_000,
        () => describeInstances(a, b),
      );
      // The standby's checkpoint says offset 2.
      await b.close(leavingGroup());
      // While b is away the changelog moves on and its records are deleted up to its end.
      await producer.send({ topic: CHANGELOG, key: Buffer.from('b'), value: Buffer.alloc(8) });
      const [end] = await admin.listOffsets([{ topic: CHANGELOG, partition: 0, spec: 'latest' }]);
      const [deleted] = await admin.deleteRecords([{ topic: CHANGELOG, partition: 0, offset: end!.offset }]);
      assert.equal(deleted!.lowWatermark, 4, 'three counts and the record written here, all deleted');

      b = instance(env.dirs[1]!);
      b.setLogger((m) => logs.push(m));
      await b.start();
      await waitUntil(
        () =>
          b.state() === 'RUNNING' && b.standbyTaskIds().join() === '0_0' && activeTasks(a).join() === '0_0',
        60_000,
        () => describeInstances(a, b),
      );
      await send('x');
      const stale = b.store(
        StoreQueryParameters.fromNameAndType(
          'counts',
          QueryableStoreTypes.keyValueStore<string, bigint | number>(),
        ).enableStaleStores(),
      );
      await waitUntil(
        () => stale.get('x') !== null && stale.get('x') !== undefined,
        30_000,
        () => `${describeInstances(a, b)}\n${logs.join('\n')}`,
      );
      // The changelog holds nothing for a any more: the rebuilt standby has no count for it (not the old 3).
      assert.equal(stale.get('a') ?? null, null, logs.join('\n'));
      assert.equal(Number(stale.get('x')), 1);
      assert.ok(
        logs.some((m) => /before its first offset \d+ \(the changelog was truncated\)/.test(m)),
        logs.join('\n'),
      );
    } finally {
      await b.close();
      await a.close();
      await admin.close();
      await producer.close();
    }
  });
});
