// Standbys of in-memory stores through a broker: two instances of an in-memory count with num.standby.replicas=1.
// Each keeps a standby of the other's task, filled from the changelog into an in-memory store. When the active
// instance goes away, the survivor takes the task over with the standby's store itself (handed over in the
// process, no checkpoint): it restores only the changelog tail the standby had not read, not the changelog from
// its start, and serves the reference counts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keyPartition } from '../../src/client/partitioners.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  Materialized,
  QueryableStoreTypes,
  Serdes,
  StoreQueryParameters,
  StreamsBuilder,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import {
  activeTasks,
  closeActiveOverStandby,
  describeInstances,
  useStreamsBroker,
} from './streams-helpers.js';

const S = Serdes.String();
const INPUT = 'ims-input';
const CHANGELOG = 'ims-app-ims-counts-changelog';

const broker = useStreamsBroker({ [INPUT]: 2 }, 2);
const dirs = broker.dirs;

function instance(dir: string): KafkaStreams {
  const builder = new StreamsBuilder();
  builder.stream(INPUT, Consumed.with(S, S)).groupByKey().count(Materialized.inMemory('ims-counts'));
  return new KafkaStreams(builder.build(), {
    'application.id': 'ims-app',
    'bootstrap.servers': broker.bootstrap,
    'state.dir': dir,
    'num.standby.replicas': 1,
    'commit.interval.ms': 200,
    // Every update reaches the changelog: one record per input record for the standby to follow.
    'statestore.cache.max.bytes': 0,
    'session.timeout.ms': 6000,
    'heartbeat.interval.ms': 500,
  });
}

test('an in-memory standby becomes the active store on failover: only the tail is restored', async () => {
  const a = instance(dirs[0]!);
  const b = instance(dirs[1]!);
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  try {
    await a.start();
    await b.start();
    await waitUntil(
      () =>
        a.state() === 'RUNNING' &&
        b.state() === 'RUNNING' &&
        activeTasks(a).length === 1 &&
        activeTasks(b).length === 1 &&
        a.standbyTaskIds().length === 1 &&
        b.standbyTaskIds().length === 1,
      60_000,
      () => describeInstances(a, b),
    );
    assert.deepEqual(b.standbyTaskIds(), activeTasks(a), "b keeps a standby of a's in-memory task");

    const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
    const reference = new Map<string, number>();
    const records = Array.from({ length: 800 }, (_, i) => keys[(i * 7) % keys.length]!);
    for (const k of records) reference.set(k, (reference.get(k) ?? 0) + 1);
    await producer.sendBatch(
      records.map((k) => ({ topic: INPUT, key: Buffer.from(k), value: Buffer.from('v') })),
    );

    // a's changelog partition gets one update per input record of its partition; wait until a's commits have
    // written them all and b's standby has applied them all.
    const aPartition = Number(activeTasks(a)[0]!.split('_')[1]);
    const expected = records.filter((k) => keyPartition(Buffer.from(k), 2) === aPartition).length;
    const bPartitionRecords = records.length - expected;
    // Without the hand-over b would replay a's whole partition of the changelog (`expected` records).
    const restored = await closeActiveOverStandby(broker.bootstrap, CHANGELOG, aPartition, expected, a, b);
    assert.ok(restored <= expected / 10, `restored ${restored} of ${expected} changelog records`);

    const store = b.store(
      StoreQueryParameters.fromNameAndType('ims-counts', QueryableStoreTypes.keyValueStore<string, number>()),
    );
    await waitUntil(
      () => keys.every((k) => store.get(k) === reference.get(k)),
      30_000,
      () => keys.map((k) => `${k}=${store.get(k)}/${reference.get(k)}`).join(' '),
    );
    assert.ok(bPartitionRecords > 0 && expected > 0, 'both partitions had input');
  } finally {
    await producer.close();
    await a.close();
    await b.close();
  }
});
