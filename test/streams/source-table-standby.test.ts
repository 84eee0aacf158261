// Standbys and lags of stores restored from their source topics (reuse.ktable.source.topics), through a broker.
// As Kafka's ChangelogTopics counts a source topic used as a changelog, a task whose only store is such a table is
// stateful: with num.standby.replicas=1 the other instance keeps a standby of it that reads the source topic up to
// the group's committed offset (Kafka's StoreChangelogReader limit for standbys), so a failover restores next to
// nothing. And the lags count the source partition in the end offset sum (the group's committed offset, Kafka's
// computeEndOffsetSumsByTask) as the checkpoint's offset sum does: an instance whose checkpoint holds the table's
// source offset but an old changelog offset is not caught up, so it gets a warm-up instead of the active task.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admin } from '../../src/client/admin.js';
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
  StreamsConfig,
} from '../../src/streams/index.js';
import { untilValue, waitUntil } from '../helpers/wait.js';
import {
  activeTasks,
  closeActiveOverStandby,
  describeInstances,
  leavingGroup,
  useStreamsBroker,
} from './streams-helpers.js';

const S = Serdes.String();
const TABLE_INPUT = 'sts-in';
const MEM_TABLE_INPUT = 'sts-mem-in';
const CUSTOMERS = 'sts-customers';
const ORDERS = 'sts-orders';

const LIMIT_INPUT = 'sts-limit-in';

const broker = useStreamsBroker(
  { [TABLE_INPUT]: 2, [MEM_TABLE_INPUT]: 2, [LIMIT_INPUT]: 2, [CUSTOMERS]: 2, [ORDERS]: 2 },
  8,
);
const dirs = broker.dirs;

function tableInstance(
  app: string,
  input: string,
  inMemory: boolean,
  port: number,
  dir: string,
  commitIntervalMs = 200,
): KafkaStreams {
  const props = {
    'application.id': app,
    'bootstrap.servers': broker.bootstrap,
    'state.dir': dir,
    'application.server': `localhost:${port}`,
    'num.standby.replicas': 1,
    'commit.interval.ms': commitIntervalMs,
    'session.timeout.ms': 6000,
    'heartbeat.interval.ms': 500,
    [StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG]: StreamsConfig.OPTIMIZE,
  };
  const builder = new StreamsBuilder();
  builder.table(
    input,
    Consumed.with(S, S),
    inMemory ? Materialized.inMemory('sts-table') : Materialized.as('sts-table'),
  );
  return new KafkaStreams(builder.build(props), props);
}

async function standbyTakesOver(app: string, input: string, inMemory: boolean, dirA: string, dirB: string) {
  const a = tableInstance(app, input, inMemory, 7201, dirA);
  const b = tableInstance(app, input, inMemory, 7202, dirB);
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  try {
    await a.start();
    await waitUntil(
      () => a.state() === 'RUNNING' && activeTasks(a).length === 2,
      30_000,
      () => describeInstances(a, b),
    );
    await b.start();
    // The table's tasks are stateful: each instance keeps a standby of the other's task.
    await waitUntil(
      () =>
        a.state() === 'RUNNING' &&
        b.state() === 'RUNNING' &&
        activeTasks(a).length === 1 &&
        activeTasks(b).length === 1 &&
        b.standbyTaskIds().length === 1 &&
        a.standbyTaskIds().length === 1,
      30_000,
      () => describeInstances(a, b),
    );
    assert.deepEqual(b.standbyTaskIds(), activeTasks(a));
    const records = Array.from({ length: 300 }, (_, i) => ({ key: `k${i % 60}`, value: `v${i}` }));
    const latest = new Map(records.map((r) => [r.key, r.value]));
    await producer.sendBatch(
      records.map((r) => ({ topic: input, key: Buffer.from(r.key), value: Buffer.from(r.value) })),
    );
    const aPartition = Number(activeTasks(a)[0]!.split('_')[1]);
    const expected = records.filter((r) => keyPartition(Buffer.from(r.key), 2) === aPartition).length;
    // The standby applies the source topic only up to the group's committed offset: wait for a's commit.
    await untilValue('the commit of every record of its partition', async () => {
      const [o] = await admin.listConsumerGroupOffsets(app, [{ topic: input, partition: aPartition }]);
      return o?.offset === expected ? true : null;
    });
    const restored = await closeActiveOverStandby(broker.bootstrap, input, aPartition, expected, a, b);
    assert.ok(restored <= expected / 10, `restored ${restored} of ${expected} source records`);
    const store = b.store(
      StoreQueryParameters.fromNameAndType('sts-table', QueryableStoreTypes.keyValueStore<string, string>()),
    );
    await waitUntil(
      () => [...latest].every(([k, v]) => store.get(k) === v),
      30_000,
      () => [...latest].map(([k, v]) => `${k}=${store.get(k)}/${v}`).join(' '),
    );
  } finally {
    await producer.close();
    await admin.close();
    await a.close();
    await b.close();
  }
}

test('a table restored from its source topic has a standby: failover restores next to nothing', async () => {
  await standbyTakesOver('sts-app', TABLE_INPUT, false, dirs[0]!, dirs[1]!);
});

test('an in-memory table restored from its source topic: the standby store is handed over', async () => {
  await standbyTakesOver('sts-mem-app', MEM_TABLE_INPUT, true, dirs[2]!, dirs[3]!);
});

test('the standby applies nothing past the offset the active task committed', async () => {
  // Commits only at rebalances and close: the records processed meanwhile are past the committed offsets.
  const a = tableInstance('sts-limit', LIMIT_INPUT, false, 7203, dirs[6]!, 600_000);
  const b = tableInstance('sts-limit', LIMIT_INPUT, false, 7204, dirs[7]!, 600_000);
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
        b.standbyTaskIds().length === 1 &&
        a.standbyTaskIds().length === 1,
      30_000,
      () => describeInstances(a, b),
    );
    await producer.sendBatch(
      Array.from({ length: 100 }, (_, i) => ({
        topic: LIMIT_INPUT,
        key: Buffer.from(`k${i}`),
        value: Buffer.from(`v${i}`),
      })),
    );
    await waitUntil(
      () => a.processedRecords() + b.processedRecords() >= 100,
      30_000,
      () => describeInstances(a, b),
    );
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(a.standbyRecords() + b.standbyRecords(), 0, describeInstances(a, b));
  } finally {
    await producer.close();
    await a.close();
    await b.close();
  }
});

function joinInstance(dir: string): KafkaStreams {
  const props = {
    'application.id': 'sts-lag',
    'bootstrap.servers': broker.bootstrap,
    'state.dir': dir,
    'commit.interval.ms': 200,
    'statestore.cache.max.bytes': 0,
    'acceptable.recovery.lag': 50,
    // No probing rebalance while the test looks at the first placement.
    'probing.rebalance.interval.ms': 600_000,
    'session.timeout.ms': 6000,
    'heartbeat.interval.ms': 500,
    [StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG]: StreamsConfig.OPTIMIZE,
  };
  // One sub-topology, two stores per task: the customers table (restored from its topic) and the counts
  // (a changelog of their own).
  const builder = new StreamsBuilder();
  const customers = builder.table(CUSTOMERS, Consumed.with(S, S), Materialized.as('sts-customers-table'));
  builder
    .stream(ORDERS, Consumed.with(S, S))
    .join(customers, (_order, customer) => customer)
    .groupByKey()
    .count(Materialized.as('sts-order-counts'));
  return new KafkaStreams(builder.build(props), props);
}

test("the lags count the source topic in the end offset sum as in the checkpoint's sum", async () => {
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  const send = (topic: string, keys: string[]) =>
    producer.sendBatch(
      keys.map((k) => ({ topic, key: Buffer.from(k), value: Buffer.from(`${topic}-${k}`) })),
    );
  const customers = Array.from({ length: 600 }, (_, i) => `c${i}`);
  let a: KafkaStreams | undefined;
  let b: KafkaStreams | undefined;
  try {
    // b processes many customers and a few orders, then stops: its checkpoints hold a large source offset and
    // a small changelog offset per task.
    await send(CUSTOMERS, customers);
    b = joinInstance(dirs[5]!);
    await b.start();
    await waitUntil(
      () => b!.processedRecords() >= customers.length,
      30_000,
      () => describeInstances(b!),
    );
    await send(ORDERS, customers.slice(0, 10));
    await waitUntil(
      () => b!.processedRecords() >= customers.length + 10,
      30_000,
      () => describeInstances(b!),
    );
    await new Promise((r) => setTimeout(r, 500));
    await b.close(leavingGroup());
    b = undefined;
    // a, on an empty state directory, counts 200 more orders: b's changelog offsets are ~100 behind per task,
    // far more than acceptable.recovery.lag, its source offsets not at all.
    a = joinInstance(dirs[4]!);
    await a.start();
    await waitUntil(
      () => a!.state() === 'RUNNING' && activeTasks(a!).length === 2,
      30_000,
      () => describeInstances(a!),
    );
    const before = a.processedRecords();
    await send(
      ORDERS,
      Array.from({ length: 200 }, (_, i) => customers[i % 40]!),
    );
    await waitUntil(
      () => a!.processedRecords() >= before + 200,
      30_000,
      () => describeInstances(a!),
    );
    await new Promise((r) => setTimeout(r, 500));
    b = joinInstance(dirs[5]!);
    await b.start();
    await waitUntil(
      () =>
        a!.state() === 'RUNNING' &&
        b!.state() === 'RUNNING' &&
        activeTasks(b!).length + b!.standbyTaskIds().length > 0,
      30_000,
      () => describeInstances(a!, b!),
    );
    // A task moving to b would be revoked from a first and assigned in a follow-up rebalance: wait for it.
    await new Promise((r) => setTimeout(r, 3000));
    await waitUntil(
      () => a!.state() === 'RUNNING' && b!.state() === 'RUNNING',
      30_000,
      () => describeInstances(a!, b!),
    );
    // b is not caught up: a keeps both tasks and b warms one up (before, b's lag counted 0 and it took one).
    assert.deepEqual([activeTasks(a), activeTasks(b), b.standbyTaskIds().length], [['0_0', '0_1'], [], 1]);
  } finally {
    await producer.close();
    await b?.close();
    await a?.close();
  }
});
