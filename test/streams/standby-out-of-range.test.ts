// A standby task whose checkpoint points before its changelog's first offset (records deleted while its instance
// was away): Kafka's standbys read their changelogs with the restore consumer, auto.offset.reset "none", so the
// out-of-range position marks the standby corrupted: its changelog offsets are dropped and it is closed dirty,
// which wipes its state only under exactly-once (StateManagerUtil.closeStateManager). Under at_least_once a
// persistent store keeps its contents and the changelog is read again from its first offset over them.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  type KafkaStreams,
  type ProcessingGuarantee,
  QueryableStoreTypes,
  StoreQueryParameters,
  KafkaStreams as Streams,
} from '../../src/streams/index.js';
import { truncateChangelog } from '../helpers/truncate-changelog.js';
import { untilValue, waitUntil } from '../helpers/wait.js';
import {
  activeTasks,
  changelogEnd,
  countByKeyTopology,
  describeInstances,
  leavingGroup,
  useStreamsBroker,
} from './streams-helpers.js';

describe('a standby whose changelog records after its checkpoint are gone', () => {
  const env = useStreamsBroker({ 'sboor-in': 1, 'sboor-out': 1, 'sboor-eos-in': 1, 'sboor-eos-out': 1 }, 2);

  function instance(app: string, guarantee: ProcessingGuarantee, dir: string): KafkaStreams {
    return new Streams(countByKeyTopology(`${app}-in`, `${app}-out`, 'counts'), {
      'application.id': app,
      'processing.guarantee': guarantee,
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

  /** a's and x's counts in the standby's store once it is back to a changelog truncated to its end. */
  async function standbyCountsAfterTruncation(app: string, guarantee: ProcessingGuarantee) {
    const changelog = `${app}-counts-changelog`;
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const admin = new Admin({ bootstrapServers: env.bootstrap });
    const a = instance(app, guarantee, env.dirs[0]!);
    let b = instance(app, guarantee, env.dirs[1]!);
    const send = (key: string) =>
      producer.send({ topic: `${app}-in`, key: Buffer.from(key), value: Buffer.from('x') });
    const logs: string[] = [];
    try {
      await a.start();
      await waitUntil(
        () => a.state() === 'RUNNING' && activeTasks(a).length === 1,
        30_000,
        () => describeInstances(a, b),
      );
      // b holds the standby of the one task, a the active one.
      const untilBStandsBy = () =>
        waitUntil(
          () =>
            b.state() === 'RUNNING' && b.standbyTaskIds().join() === '0_0' && activeTasks(a).join() === '0_0',
          60_000,
          () => describeInstances(a, b),
        );
      // Counted before b joins: b, with no state, lags the changelog and gets the standby.
      for (const _ of [1, 2, 3]) await send('a');
      await untilValue('the three counts in the changelog', async () =>
        (await changelogEnd(env.bootstrap, changelog, 0)) >= 3 ? true : null,
      );
      await b.start();
      await untilBStandsBy();
      await waitUntil(
        () => b.standbyRecords() >= 3,
        30_000,
        () => describeInstances(a, b),
      );
      // The standby's checkpoint says offset 2.
      await b.close(leavingGroup());
      // While b is away the changelog moves on and its records are deleted up to its end.
      await producer.send({ topic: changelog, key: Buffer.from('b'), value: Buffer.alloc(8) });
      const [end] = await admin.listOffsets([{ topic: changelog, partition: 0, spec: 'latest' }]);
      const lowWatermark = await truncateChangelog(admin, changelog, end!.offset);
      if (guarantee === 'at_least_once')
        assert.equal(lowWatermark, 4, 'three counts and the record written here, all deleted');

      b = instance(app, guarantee, env.dirs[1]!);
      b.setLogger((m) => logs.push(m));
      await b.start();
      await untilBStandsBy();
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
      assert.ok(
        logs.some((m) => /before its first offset \d+ \(the changelog was truncated\)/.test(m)),
        logs.join('\n'),
      );
      return { a: stale.get('a') ?? null, x: Number(stale.get('x')), logs };
    } finally {
      await b.close();
      await a.close();
      await admin.close();
      await producer.close();
    }
  }

  it('under at_least_once keeps the standby store and reads the changelog again from its first offset', async () => {
    const { a, x, logs } = await standbyCountsAfterTruncation('sboor', 'at_least_once');
    // The changelog holds nothing for a any more; the store keeps its old count, as Kafka's does.
    assert.equal(Number(a), 3, logs.join('\n'));
    assert.equal(x, 1);
  });

  it('under exactly_once_v2 wipes the standby state and rebuilds it from the changelog', async () => {
    const { a, x, logs } = await standbyCountsAfterTruncation('sboor-eos', 'exactly_once_v2');
    // The changelog holds nothing for a any more: the rebuilt standby has no count for it (not the old 3).
    assert.equal(a, null, logs.join('\n'));
    assert.equal(x, 1);
  });
});
