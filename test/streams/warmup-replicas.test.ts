// Warm-up replicas and probing rebalances (KIP-441) through a broker: one instance counts into a
// store with several hundred changelog records per task; a second instance without state joins. With
// acceptable.recovery.lag 50 it is not caught up, so the first instance keeps every active task and the newcomer
// gets warm-up replicas (standbys) that read the changelogs; a probing rebalance (probing.rebalance.interval.ms
// 3000) then finds them caught up and moves the tasks, which restore only what the warm-ups lacked. Counts stay
// exact. The same again with an in-memory store, whose warm-up store becomes the active task's store.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  Materialized,
  Produced,
  Serdes,
  StreamsBuilder,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { activeTasks, TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const INPUT = 'wu-input';
const OUTPUT = 'wu-output';
const MEM_INPUT = 'wu-mem-input';
const MEM_OUTPUT = 'wu-mem-output';
const PARTITIONS = 4;
const ACCEPTABLE_LAG = 50;

const broker = useStreamsBroker(
  { [INPUT]: PARTITIONS, [OUTPUT]: PARTITIONS, [MEM_INPUT]: PARTITIONS, [MEM_OUTPUT]: PARTITIONS },
  2,
);
const dirs = broker.dirs;

interface Scenario {
  applicationId: string;
  input: string;
  output: string;
  /** In-memory stores: the warm-up's engine is handed to the active task (no checkpoint between them). */
  inMemory: boolean;
}

function instance(dir: string, sc: Scenario): KafkaStreams {
  const builder = new StreamsBuilder();
  builder
    .stream(sc.input, Consumed.with(S, S))
    .groupByKey()
    .count(sc.inMemory ? Materialized.inMemory('wu-counts') : Materialized.as('wu-counts'))
    .toStream()
    .to(sc.output, Produced.with(S, Serdes.Long()));
  return new KafkaStreams(builder.build(), {
    'application.id': sc.applicationId,
    'bootstrap.servers': broker.bootstrap,
    'state.dir': dir,
    'commit.interval.ms': 200,
    // Every update reaches the changelog: several hundred records per task to restore or warm up.
    'statestore.cache.max.bytes': 0,
    'acceptable.recovery.lag': ACCEPTABLE_LAG,
    'probing.rebalance.interval.ms': 3000,
    'session.timeout.ms': 10000,
    'heartbeat.interval.ms': 500,
  });
}

async function warmUpScenario(sc: Scenario): Promise<void> {
  const a = instance(dirs[0]!, sc);
  const b = instance(dirs[1]!, sc);
  const describe = () =>
    [a, b]
      .map(
        (s, i) =>
          `${'ab'[i]}: ${s.state()} active ${activeTasks(s).join(',')} standby ${s.standbyTaskIds().join(',')} restored ${s.restoredRecords()}`,
      )
      .join('\n');
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  const output = new TopicFollower(broker.bootstrap, sc.output, PARTITIONS);
  output.start();
  const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
  const reference = new Map<string, number>();
  const produce = async (n: number): Promise<void> => {
    const batch = Array.from({ length: n }, (_, i) => keys[(i * 11) % keys.length]!);
    for (const k of batch) reference.set(k, (reference.get(k) ?? 0) + 1);
    await producer.sendBatch(
      batch.map((k) => ({ topic: sc.input, key: Buffer.from(k), value: Buffer.from('v') })),
    );
  };
  const countOf = (k: string): number | undefined => {
    const v = output.latest.get(k);
    return v === undefined || v === null ? undefined : Number(v.readBigInt64BE());
  };
  const countsMatch = () => keys.every((k) => countOf(k) === reference.get(k));
  const countsText = () => keys.map((k) => `${k}=${countOf(k)}/${reference.get(k)}`).join(' ');
  try {
    await a.start();
    await waitUntil(() => a.state() === 'RUNNING' && activeTasks(a).length === PARTITIONS, 60_000, describe);
    await produce(2000);
    await waitUntil(countsMatch, 60_000, () => `${describe()}\n${countsText()}`);

    // b has no state: about 500 changelog records per task, far beyond acceptable.recovery.lag.
    await b.start();
    await waitUntil(() => b.state() === 'RUNNING' && b.standbyTaskIds().length > 0, 60_000, describe);
    const warming = b.standbyTaskIds();
    assert.deepEqual(activeTasks(b), [], 'b runs no active task before its warm-ups caught up');
    assert.equal(activeTasks(a).length, PARTITIONS, 'a keeps every active task meanwhile');
    assert.ok(warming.length <= 2, `at most max.warmup.replicas (2) warm-ups: ${warming.join(',')}`);
    const restoredBefore = b.restoredRecords();

    // A probing rebalance moves the caught-up tasks; later ones warm up in turn until the load is even.
    await waitUntil(
      () =>
        a.state() === 'RUNNING' &&
        b.state() === 'RUNNING' &&
        activeTasks(a).length === PARTITIONS / 2 &&
        activeTasks(b).length === PARTITIONS / 2 &&
        b.standbyTaskIds().length === 0,
      90_000,
      describe,
    );
    const restored = b.restoredRecords() - restoredBefore;
    assert.ok(
      restored <= (PARTITIONS / 2) * ACCEPTABLE_LAG,
      `b restored ${restored} records: only the tail its warm-ups lacked (about 1000 without them)`,
    );

    await produce(400);
    await waitUntil(countsMatch, 60_000, () => `${describe()}\n${countsText()}`);
  } finally {
    await producer.close();
    await output.stop();
    await a.close();
    await b.close();
  }
}

test('a new instance warms up before it takes active tasks, through a probing rebalance', async () => {
  await warmUpScenario({ applicationId: 'wu-app', input: INPUT, output: OUTPUT, inMemory: false });
});

test('in-memory stores warm up too: the warm-up store becomes the active one', async () => {
  await warmUpScenario({ applicationId: 'wu-mem-app', input: MEM_INPUT, output: MEM_OUTPUT, inMemory: true });
});
