// A task with two stores, one of whose changelogs is truncated past the task's checkpoint or position: Kafka marks
// the task corrupted and drops the offsets of all its changelogs, not only the truncated one's
// (TaskManager.closeDirtyAndRevive and DefaultStateUpdater mark task.changelogPartitions() corrupted), so every
// store of the task is restored again from its changelog's first offset: over its contents under at_least_once,
// wiped first under exactly_once_v2, and a standby of the task reads every store again. The restore listener
// hears the untouched store's restoration from offset 0.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  Materialized,
  type ProcessingGuarantee,
  QueryableStoreTypes,
  Serdes,
  StoreQueryParameters,
  StreamsBuilder,
  type StreamsProperties,
} from '../../src/streams/index.js';
import { truncateChangelog, truncateChangelogNow } from '../helpers/truncate-changelog.js';
import { untilValue, waitUntil } from '../helpers/wait.js';
import {
  activeTasks,
  changelogEnd,
  describeInstances,
  leavingGroup,
  type StreamsBroker,
  useStreamsBroker,
} from './streams-helpers.js';

const S = Serdes.String();

/** Two counts of one input in one task: stores c1 and c2. */
function start(env: StreamsBroker, app: string, dir: string, extra: StreamsProperties): KafkaStreams {
  const builder = new StreamsBuilder();
  const input = builder.stream(`${app}-in`, Consumed.with(S, S));
  input.groupByKey().count(Materialized.as('c1'));
  input.groupByKey().count(Materialized.as('c2'));
  return new KafkaStreams(builder.build(), {
    'application.id': app,
    'bootstrap.servers': env.bootstrap,
    'state.dir': dir,
    'commit.interval.ms': 100,
    // One changelog record per input record and store.
    'statestore.cache.max.bytes': 0,
    ...extra,
  });
}

function countOf(streams: KafkaStreams, store: string, key: string): number | null {
  return streams
    .store(StoreQueryParameters.fromNameAndType(store, QueryableStoreTypes.keyValueStore<string, number>()))
    .get(key);
}

describe('a corrupted task restores all its stores again', () => {
  const env = useStreamsBroker({ 'ct-in': 1, 'ct-eos-in': 1, 'ct-sb-in': 1 }, 4);

  /**
   * Runs `app` until a is counted 3 times in both stores, closes it, lets `truncate` cut c1's changelog, and
   * starts it again: answers its restore listener's lines once c2 answers `expected` for a.
   */
  async function restartAfterTruncation(
    app: string,
    dir: string,
    guarantee: ProcessingGuarantee,
    extra: StreamsProperties,
    truncate: (admin: Admin, producer: Producer) => Promise<(store: string) => void>,
  ): Promise<{ restoring: string[]; logs: string[] }> {
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const admin = new Admin({ bootstrapServers: env.bootstrap });
    const eos = { 'processing.guarantee': guarantee };
    try {
      const first = start(env, app, dir, eos);
      await first.start();
      for (const _ of [1, 2, 3])
        await producer.send({ topic: `${app}-in`, key: Buffer.from('a'), value: Buffer.from('x') });
      await waitUntil(
        () =>
          first.state() === 'RUNNING' && countOf(first, 'c1', 'a') === 3 && countOf(first, 'c2', 'a') === 3,
        30_000,
        () => `state ${first.state()}`,
      );
      await first.close(leavingGroup());
      const onStart = await truncate(admin, producer);
      const second = start(env, app, dir, { ...eos, ...extra });
      const restoring: string[] = [];
      second.setGlobalStateRestoreListener({
        onRestoreStart: (tp, store, from, end) => {
          restoring.push(`start ${tp.topic}-${tp.partition} ${store} ${from}-${end}`);
          onStart(store);
        },
        onBatchRestored: () => {},
        onRestoreEnd: (tp, store, total) =>
          restoring.push(`end ${tp.topic}-${tp.partition} ${store} ${total}`),
      });
      const logs: string[] = [];
      second.setLogger((m) => logs.push(m));
      try {
        await second.start();
        await waitUntil(
          () => second.state() === 'RUNNING' && countOf(second, 'c2', 'a') === 3,
          30_000,
          () => `state ${second.state()}\n${restoring.join('\n')}\n${logs.join('\n')}`,
        );
      } finally {
        await second.close(leavingGroup());
      }
      return { restoring, logs };
    } finally {
      await admin.close();
      await producer.close();
    }
  }

  it('under at_least_once, c1 truncated while away: c2 is replayed from its first offset too', async () => {
    const app = 'ct';
    const { restoring, logs } = await restartAfterTruncation(
      app,
      env.dirs[0]!,
      'at_least_once',
      {},
      async (admin, producer) => {
        // c1's changelog (offsets 0-2, checkpoint 2) loses its records up to after a new one: the checkpoint
        // lies before its first offset.
        await producer.send({ topic: `${app}-c1-changelog`, key: Buffer.from('b'), value: Buffer.alloc(8) });
        await truncateChangelog(admin, `${app}-c1-changelog`, 4);
        return () => {};
      },
    );
    // c2's checkpoint (2) is dropped with c1's: its three counts are restored again, from offset 0.
    assert.ok(restoring.includes('start ct-c2-changelog-0 c2 0-3'), restoring.join('\n'));
    assert.ok(restoring.includes('end ct-c2-changelog-0 c2 3'), restoring.join('\n'));
    assert.ok(
      logs.some((m) => /checkpointed offset 2 of ct-c1-changelog-0 is before its first offset 4/.test(m)),
      logs.join('\n'),
    );
  });

  it('under exactly_once_v2, c1 truncated while it restores: c2 is wiped and restored from offset 0', async () => {
    const app = 'ct-eos';
    const appended = 300;
    const { restoring, logs } = await restartAfterTruncation(
      app,
      env.dirs[1]!,
      'exactly_once_v2',
      // One record batch per fetch: c1's restoration is still at its start when its records go.
      { 'restore.consumer.fetch.max.bytes': 1, 'restore.consumer.max.partition.fetch.bytes': 1 },
      async (admin, producer) => {
        // c1's changelog gets more records, each in a batch of its own; the checkpoint stays valid ...
        for (let i = 0; i < appended; i++)
          await producer.send({
            topic: `${app}-c1-changelog`,
            partition: 0,
            key: Buffer.from(`k${i}`),
            value: Buffer.alloc(8),
          });
        const [end] = await admin.listOffsets([
          { topic: `${app}-c1-changelog`, partition: 0, spec: 'latest' },
        ]);
        // ... until c1's restoration starts: then its records go up to the middle of the appended ones.
        return (store) => {
          if (store === 'c1')
            truncateChangelogNow(env.bootstrap, `${app}-c1-changelog`, end!.offset - appended / 2);
        };
      },
    );
    // c2 restores from its checkpoint (2) only the transaction's commit marker; the corrupted task restores it
    // again from offset 0, wiped: its three counts (none without, kept on from the checkpoint).
    assert.ok(restoring.includes(`end ${app}-c2-changelog-0 c2 3`), restoring.join('\n'));
    assert.ok(
      logs.some((m) =>
        /before its first offset \d+ \(the changelog was truncated\): task 0_0 is corrupted/.test(m),
      ),
      logs.join('\n'),
    );
  });

  it('a standby whose c1 changelog was truncated while away reads c2 again from offset 0 too', async () => {
    const app = 'ct-sb';
    const props: StreamsProperties = {
      'num.standby.replicas': 1,
      // b, back with a lagging checkpoint, is not caught up: the task stays active on a, b gets the standby.
      'acceptable.recovery.lag': 0,
      'session.timeout.ms': 6000,
      'heartbeat.interval.ms': 500,
    };
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const admin = new Admin({ bootstrapServers: env.bootstrap });
    const a = start(env, app, env.dirs[2]!, props);
    let b = start(env, app, env.dirs[3]!, props);
    const send = (key: string) =>
      producer.send({ topic: `${app}-in`, key: Buffer.from(key), value: Buffer.from('x') });
    const untilBStandsBy = () =>
      waitUntil(
        () =>
          b.state() === 'RUNNING' && b.standbyTaskIds().join() === '0_0' && activeTasks(a).join() === '0_0',
        60_000,
        () => describeInstances(a, b),
      );
    try {
      await a.start();
      await waitUntil(
        () => a.state() === 'RUNNING' && activeTasks(a).length === 1,
        30_000,
        () => describeInstances(a, b),
      );
      for (const _ of [1, 2, 3]) await send('a');
      await untilValue('the three counts in c2', async () =>
        (await changelogEnd(env.bootstrap, `${app}-c2-changelog`, 0)) >= 3 ? true : null,
      );
      await b.start();
      await untilBStandsBy();
      await waitUntil(
        () => b.standbyRecords() >= 6,
        30_000,
        () => describeInstances(a, b),
      );
      // The standby's checkpoint says offset 2 for both changelogs; c1's records go up to after a new one.
      await b.close(leavingGroup());
      await producer.send({ topic: `${app}-c1-changelog`, key: Buffer.from('b'), value: Buffer.alloc(8) });
      await truncateChangelog(admin, `${app}-c1-changelog`, 4);

      b = start(env, app, env.dirs[3]!, props);
      const logs: string[] = [];
      b.setLogger((m) => logs.push(m));
      await b.start();
      await untilBStandsBy();
      await send('x');
      // x's count in both stores (2 records), and c2's three counts read again from offset 0 (none without: c2
      // would resume after its checkpoint).
      await waitUntil(
        () => b.standbyRecords() >= 5,
        30_000,
        () => `${b.standbyRecords()} standby records\n${describeInstances(a, b)}\n${logs.join('\n')}`,
      );
      assert.ok(
        logs.some((m) =>
          /standby task 0_0: store c1 .* \(the changelog was truncated\): the task is corrupted/.test(m),
        ),
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
