// upgrade.from through a broker, two Brook instances of one application.
// From 1.1: instance a runs the first rolling bounce with upgrade.from 1.1, b without. As the coordinator stores
// them, a's subscription is version 2 and b's 11, and both assignments are version 2 (what a 1.1 member reads);
// the four tasks are split and every input record comes out once. a is then restarted without upgrade.from (the
// second bounce): the group moves to version 11 for every subscription and assignment and keeps processing, every
// record once.
// From 2.3: the subscription stays version 11 (2.0 and later probe versions by themselves, as Kafka), but a
// offers only the eager protocol: it joins again when b arrives without claiming the partitions it holds, where
// a cooperative member lists them (Kafka's EAGER vs COOPERATIVE).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { Consumed, KafkaStreams, Produced, Serdes, StreamsBuilder } from '../../src/streams/index.js';
import type { UpgradeFrom } from '../../src/streams/runtime/upgrade-from.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import {
  activeTasks,
  describeInstances,
  describeStreamsGroup,
  groupActiveTasks,
  leavingGroup,
  type StreamsGroupView,
  TopicFollower,
  useStreamsBroker,
  waitForStreamsGroup,
} from './streams-helpers.js';

const S = Serdes.String();
const broker = useStreamsBroker({ 'up11-in': 4, 'up11-out': 1, 'up23-in': 4, 'up23-out': 1 }, 3);

function instance(app: string, dir: string, upgradeFrom?: UpgradeFrom): KafkaStreams {
  const builder = new StreamsBuilder();
  builder
    .stream(`${app}-in`, Consumed.with(S, S))
    .mapValues((v) => v.toUpperCase())
    .to(`${app}-out`, Produced.with(S, S));
  return new KafkaStreams(builder.build(), {
    'application.id': app,
    'bootstrap.servers': broker.bootstrap,
    'state.dir': dir,
    'commit.interval.ms': 200,
    'session.timeout.ms': 6000,
    'heartbeat.interval.ms': 500,
    ...(upgradeFrom === undefined ? {} : { 'upgrade.from': upgradeFrom }),
  });
}

type GroupView = StreamsGroupView;
const groupView = (app: string) => describeStreamsGroup(broker.bootstrap, app);
const waitForGroup = (app: string, ok: (v: GroupView) => boolean, why: () => string) =>
  waitForStreamsGroup(broker.bootstrap, app, ok, why);
const allTasks = groupActiveTasks;

function sender(producer: Producer, topic: string) {
  return (from: number, n: number) =>
    producer.sendBatch(
      Array.from({ length: n }, (_, i) => ({
        topic,
        key: Buffer.from(`k${from + i}`),
        value: Buffer.from(`v${from + i}`),
      })),
    );
}

/** Every record of keys 0..n-1 out exactly once, upper-cased. */
async function exactlyOnceOut(out: TopicFollower, n: number, why: () => string): Promise<void> {
  await waitUntil(
    () => out.records.length >= n,
    60_000,
    () => `${out.records.length} of ${n} out\n${why()}`,
  );
  await sleep(1000); // anything duplicated would arrive by now
  assert.equal(out.records.length, n, `${out.records.length} records out for ${n} in`);
  assert.equal(new Set(out.records.map((r) => r.key)).size, n);
  assert.ok(out.records.every((r) => r.value!.toString() === `V${r.key.slice(1)}`));
}

test('upgrade.from 1.1: the group speaks version 2 during the first bounce, 11 after the second', async () => {
  const app = 'up11';
  let a = instance(app, broker.dirs[0]!, '1.1');
  const b = instance(app, broker.dirs[1]!);
  const out = new TopicFollower(broker.bootstrap, `${app}-out`, 1);
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  const send = sender(producer, `${app}-in`);
  try {
    out.start();
    await a.start();
    await waitUntil(
      () => a.state() === 'RUNNING' && activeTasks(a).length === 4,
      60_000,
      () => describeInstances(a),
    );
    await b.start();
    await waitForGroup(
      app,
      (v) =>
        v.state === 'Stable' &&
        v.members.length === 2 &&
        v.members
          .map((m) => m.subscription?.version)
          .sort((x, y) => x! - y!)
          .join() === '2,11' &&
        v.members.every((m) => m.assignment?.version === 2) &&
        allTasks(v).join() === '0_0,0_1,0_2,0_3' &&
        a.state() === 'RUNNING' &&
        b.state() === 'RUNNING' &&
        activeTasks(a).length === 2 &&
        activeTasks(b).length === 2,
      () => describeInstances(a, b),
    );
    await send(0, 200);
    await exactlyOnceOut(out, 200, () => describeInstances(a, b));
    const still = await groupView(app);
    assert.deepEqual(
      still.members.map((m) => m.assignment?.version),
      [2, 2],
      'still version 2 after processing: no version probing below 3',
    );

    // The second bounce: a again, without upgrade.from.
    await a.close(leavingGroup());
    a = instance(app, broker.dirs[0]!);
    await a.start();
    await waitForGroup(
      app,
      (v) =>
        v.state === 'Stable' &&
        v.members.length === 2 &&
        v.members.every(
          (m) => m.subscription?.version === 11 && m.assignment?.version === 11 && m.assignment.common === 11,
        ) &&
        allTasks(v).join() === '0_0,0_1,0_2,0_3' &&
        a.state() === 'RUNNING' &&
        b.state() === 'RUNNING' &&
        activeTasks(a).length === 2 &&
        activeTasks(b).length === 2,
      () => describeInstances(a, b),
    );
    await send(200, 200);
    await exactlyOnceOut(out, 400, () => describeInstances(a, b));
  } finally {
    await a.close();
    await b.close();
    await out.stop();
    await producer.close();
  }
});

test('upgrade.from 2.3: version 11, but the upgrading instance rebalances eagerly', async () => {
  const app = 'up23';
  const a = instance(app, broker.dirs[2]!, '2.3');
  const b = instance(app, `${broker.dirs[2]!}-b`);
  const out = new TopicFollower(broker.bootstrap, `${app}-out`, 1);
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  try {
    out.start();
    await a.start();
    await waitUntil(
      () => a.state() === 'RUNNING' && activeTasks(a).length === 4,
      60_000,
      () => describeInstances(a),
    );
    const alone = await groupView(app);
    const aPid = alone.members[0]!.processId;
    await b.start();
    const settled = await waitForGroup(
      app,
      (v) =>
        v.state === 'Stable' &&
        v.members.length === 2 &&
        v.members.every((m) => m.subscription?.version === 11 && m.assignment?.version === 11) &&
        allTasks(v).join() === '0_0,0_1,0_2,0_3' &&
        a.state() === 'RUNNING' &&
        b.state() === 'RUNNING' &&
        activeTasks(a).length === 2 &&
        activeTasks(b).length === 2,
      () => describeInstances(a, b),
    );
    // a held all four partitions when b's arrival made it join again; eager, it claimed none of them.
    const aView = settled.members.find((m) => m.processId === aPid)!;
    assert.ok(aView !== undefined, JSON.stringify(settled));
    assert.equal(aView.owned, 0, 'the eager member joins without owned partitions');
    await sender(producer, `${app}-in`)(0, 100);
    await exactlyOnceOut(out, 100, () => describeInstances(a, b));
  } finally {
    await a.close();
    await b.close();
    await out.stop();
    await producer.close();
  }
});
