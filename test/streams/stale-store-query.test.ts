// Stale store queries (Kafka's StoreQueryParameters.enableStaleStores): an instance that holds a store only as a
// standby answers a query that enables stale stores from its standby's state, and refuses one that does not with
// InvalidStateStoreException, as Kafka's KafkaStreams.store does.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  InvalidStateStoreException,
  KafkaStreams,
  Materialized,
  QueryableStoreTypes,
  Serdes,
  StoreQueryParameters,
  StreamsBuilder,
  TimeWindows,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { activeTasks, describeInstances, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const INPUT = 'stale-input';
const WINDOW_MS = 60_000;

// One partition: one task, active on one instance and a standby on the other.
const broker = useStreamsBroker({ [INPUT]: 1 }, 2);

function instance(dir: string): KafkaStreams {
  const builder = new StreamsBuilder();
  const grouped = builder.stream(INPUT, Consumed.with(S, S)).groupByKey();
  grouped.count(Materialized.as('stale-counts'));
  grouped.windowedBy(TimeWindows.ofSizeWithNoGrace(WINDOW_MS)).count(Materialized.as('stale-windows'));
  return new KafkaStreams(builder.build(), {
    'application.id': 'stale-app',
    'bootstrap.servers': broker.bootstrap,
    'state.dir': dir,
    'num.standby.replicas': 1,
    'commit.interval.ms': 200,
    'statestore.cache.max.bytes': 0,
    'session.timeout.ms': 6000,
    'heartbeat.interval.ms': 500,
  });
}

/** A read that treats "not queryable now" (a rebalance) as no answer yet. */
function read<T>(query: () => T): T | undefined {
  try {
    return query();
  } catch (e) {
    if (e instanceof InvalidStateStoreException) return undefined;
    throw e;
  }
}

/** The error of a store only held elsewhere, while the client runs (not the one of a rebalance). */
const MIGRATED = /may have migrated to another instance/;

const counts = () =>
  StoreQueryParameters.fromNameAndType('stale-counts', QueryableStoreTypes.keyValueStore<string, number>());

test('an instance holding only a standby answers stale queries, and refuses the others', async () => {
  const a = instance(broker.dirs[0]!);
  const b = instance(broker.dirs[1]!);
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  try {
    await a.start();
    await waitUntil(
      () => a.state() === 'RUNNING' && activeTasks(a).length === 1,
      30_000,
      () => describeInstances(a, b),
    );
    await b.start();
    // One instance runs the task, the other keeps its standby (a rebalance may still swap them: the roles are
    // read once the active instance serves the reference).
    const settled = () =>
      a.state() === 'RUNNING' &&
      b.state() === 'RUNNING' &&
      activeTasks(a).length + activeTasks(b).length === 1 &&
      a.standbyTaskIds().length + b.standbyTaskIds().length === 1;
    await waitUntil(settled, 60_000, () => describeInstances(a, b));

    const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
    const records = Array.from({ length: 300 }, (_, i) => keys[(i * 7) % keys.length]!);
    const reference = new Map<string, number>();
    for (const k of records) reference.set(k, (reference.get(k) ?? 0) + 1);
    const timestamp = 5 * WINDOW_MS + 123;
    await producer.sendBatch(
      records.map((k) => ({ topic: INPUT, key: Buffer.from(k), value: Buffer.from('v'), timestamp })),
    );

    // The active instance answers without stale stores.
    const owner = () => (activeTasks(a).length === 1 ? a : b);
    await waitUntil(
      () => settled() && keys.every((k) => read(() => owner().store(counts()).get(k)) === reference.get(k)),
      60_000,
      () =>
        `${describeInstances(a, b)}\n${keys.map((k) => `${k}=${read(() => owner().store(counts()).get(k))}/${reference.get(k)}`).join(' ')}`,
    );
    const holder = owner() === a ? b : a;
    assert.deepEqual(holder.standbyTaskIds(), ['0_0'], describeInstances(a, b));

    // The standby's holder refuses queries without stale stores, with or without the partition ...
    assert.throws(() => holder.store(counts()), MIGRATED);
    assert.throws(() => holder.store(counts().withPartition(0)), MIGRATED);
    // ... and answers those that take stale stores, from its standby once it has applied the changelog.
    const stale = holder.store(counts().enableStaleStores());
    await waitUntil(
      () => keys.every((k) => stale.get(k) === reference.get(k)),
      60_000,
      () =>
        `${describeInstances(a, b)}\n${keys.map((k) => `${k}=${stale.get(k)}/${reference.get(k)}`).join(' ')}`,
    );
    assert.deepEqual(
      stale
        .all()
        .map((e) => [e.key, e.value])
        .sort(),
      [...reference].sort(),
    );
    assert.equal(holder.store(counts().enableStaleStores().withPartition(0)).get('k3'), reference.get('k3'));
    assert.throws(
      () => holder.store(counts().enableStaleStores().withPartition(1)),
      MIGRATED,
      'no instance of partition 1',
    );

    // A windowed store's standby is queryable the same way.
    const windowStart = 5 * WINDOW_MS;
    const windows = () =>
      StoreQueryParameters.fromNameAndType(
        'stale-windows',
        QueryableStoreTypes.windowStore<string, number>(),
      );
    assert.throws(() => holder.store(windows()), MIGRATED);
    const staleWindows = holder.store(windows().enableStaleStores());
    await waitUntil(
      () => keys.every((k) => staleWindows.fetch(k, windowStart) === reference.get(k)),
      60_000,
      () => keys.map((k) => `${k}=${staleWindows.fetch(k, windowStart)}/${reference.get(k)}`).join(' '),
    );
  } finally {
    await producer.close();
    await a.close();
    await b.close();
  }
});
