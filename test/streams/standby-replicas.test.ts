// Standby replicas and host metadata through a broker: two instances of a count with num.standby.replicas=1
// share two tasks, each keeps a standby of the other's task filled from the changelog, and both name the
// right application.server for every key (queryMetadataForKey, metadataForAllStreamsClients). When one closes,
// the other takes its task over and restores only what its standby lacked, then counts on to the reference.

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
const INPUT = 'sb-input';
const CHANGELOG = 'sb-app-sb-counts-changelog';

const broker = useStreamsBroker({ [INPUT]: 2 }, 2);
const dirs = broker.dirs;

function instance(port: number, dir: string): KafkaStreams {
  const builder = new StreamsBuilder();
  builder.stream(INPUT, Consumed.with(S, S)).groupByKey().count(Materialized.as('sb-counts'));
  return new KafkaStreams(builder.build(), {
    'application.id': 'sb-app',
    'bootstrap.servers': broker.bootstrap,
    'state.dir': dir,
    'application.server': `localhost:${port}`,
    'num.standby.replicas': 1,
    'commit.interval.ms': 200,
    // Every update reaches the changelog, so the standby has a record per input record to follow.
    'statestore.cache.max.bytes': 0,
    'session.timeout.ms': 6000,
    'heartbeat.interval.ms': 500,
  });
}

test('a standby follows the changelog, metadata names the hosts, failover restores only the tail', async () => {
  const a = instance(7101, dirs[0]!);
  const b = instance(7102, dirs[1]!);
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  try {
    await a.start();
    await waitUntil(
      () => a.state() === 'RUNNING' && activeTasks(a).length === 2,
      30_000,
      () => describeInstances(a, b),
    );
    await b.start();
    await waitUntil(
      () =>
        a.state() === 'RUNNING' &&
        b.state() === 'RUNNING' &&
        activeTasks(a).length === 1 &&
        activeTasks(b).length === 1 &&
        b.standbyTaskIds().length === 1 &&
        a.standbyTaskIds().length === 1,
      60_000,
      () => describeInstances(a, b),
    );
    // Sticky: a kept one of its tasks; each standby is the other instance's active task.
    assert.deepEqual(b.standbyTaskIds(), activeTasks(a));
    assert.deepEqual(a.standbyTaskIds(), activeTasks(b));
    assert.deepEqual(
      b.metadataForLocalThreads().flatMap((t) => t.standbyTasks),
      b.standbyTaskIds(),
      'the thread lists the standby tasks its assignment gave it',
    );

    const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
    const reference = new Map<string, number>();
    const records = Array.from({ length: 600 }, (_, i) => keys[(i * 7) % keys.length]!);
    for (const k of records) reference.set(k, (reference.get(k) ?? 0) + 1);
    await producer.sendBatch(
      records.map((k) => ({ topic: INPUT, key: Buffer.from(k), value: Buffer.from('v') })),
    );
    await waitUntil(
      () => a.processedRecords() + b.processedRecords() >= records.length,
      60_000,
      () => describeInstances(a, b),
    );

    // Both instances name the same hosts: the active one of each key's task, the other as its standby.
    const hostOf = (s: KafkaStreams) => (s === a ? 7101 : 7102);
    for (const key of ['k0', 'k1', 'k2', 'k3']) {
      const partition = keyPartition(Buffer.from(key), 2);
      const owner = activeTasks(a).includes(`0_${partition}`) ? a : b;
      const other = owner === a ? b : a;
      for (const asker of [a, b]) {
        const m = asker.queryMetadataForKey('sb-counts', key, S);
        assert.equal(m.partition, partition);
        assert.deepEqual(m.activeHost, { host: 'localhost', port: hostOf(owner) }, key);
        assert.deepEqual(m.standbyHosts, [{ host: 'localhost', port: hostOf(other) }], key);
      }
    }
    const all = a.metadataForAllStreamsClients();
    assert.deepEqual(
      all.map((m) => [
        m.hostInfo.port,
        m.stateStoreNames,
        m.topicPartitions.length,
        m.standbyTopicPartitions.length,
      ]),
      [
        [7101, ['sb-counts'], 1, 1],
        [7102, ['sb-counts'], 1, 1],
      ],
    );

    // The standby on b has every changelog record of a's task.
    const aTask = activeTasks(a)[0]!;
    const aPartition = Number(aTask.split('_')[1]);
    // The changelog's records go out with the commits; wait until a's commits have them all (one per input
    // record of its partition, without a cache).
    const expected = records.filter((k) => keyPartition(Buffer.from(k), 2) === aPartition).length;
    const restored = await closeActiveOverStandby(broker.bootstrap, CHANGELOG, aPartition, expected, a, b);
    assert.ok(restored <= expected / 10, `restored ${restored} of ${expected} changelog records`);

    // The counts b serves now are the reference, and every key maps to b.
    const store = b.store(
      StoreQueryParameters.fromNameAndType('sb-counts', QueryableStoreTypes.keyValueStore<string, number>()),
    );
    await waitUntil(
      () => keys.every((k) => store.get(k) === reference.get(k)),
      30_000,
      () => keys.map((k) => `${k}=${store.get(k)}/${reference.get(k)}`).join(' '),
    );
    assert.deepEqual(b.queryMetadataForKey('sb-counts', 'k0', S).activeHost, {
      host: 'localhost',
      port: 7102,
    });
    assert.deepEqual(b.queryMetadataForKey('sb-counts', 'k0', S).standbyHosts, []);
  } finally {
    await producer.close();
    await a.close();
    await b.close();
  }
});
