// Version probing (KIP-268) through a broker: instance b speaks user data versions up to 10 only
// (brook.assignment.latest.supported.version, as a Kafka Streams of an older protocol), a speaks 11. b starts
// first and leads; a's version-11 subscription is a future one to it. The group must end in a stable assignment
// where, as the coordinator stores them, both subscriptions and both assignments are version 10, the four tasks
// are split between the two and every input record comes out. When b closes, a alone rises back to 11.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { Consumed, KafkaStreams, Produced, Serdes, StreamsBuilder } from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import {
  activeTasks,
  describeInstances,
  groupActiveTasks,
  type StreamsGroupView,
  TopicFollower,
  useStreamsBroker,
  waitForStreamsGroup,
} from './streams-helpers.js';

const S = Serdes.String();
const APP = 'vp-app';
const broker = useStreamsBroker({ 'vp-in': 4, 'vp-out': 1 }, 2);

function instance(dir: string, latest?: number): KafkaStreams {
  const builder = new StreamsBuilder();
  builder
    .stream('vp-in', Consumed.with(S, S))
    .mapValues((v) => v.toUpperCase())
    .to('vp-out', Produced.with(S, S));
  return new KafkaStreams(builder.build(), {
    'application.id': APP,
    'bootstrap.servers': broker.bootstrap,
    'state.dir': dir,
    'commit.interval.ms': 200,
    'session.timeout.ms': 6000,
    'heartbeat.interval.ms': 500,
    ...(latest === undefined ? {} : { 'brook.assignment.latest.supported.version': latest }),
  });
}

const waitForGroup = (ok: (v: StreamsGroupView) => boolean, why: () => string) =>
  waitForStreamsGroup(broker.bootstrap, APP, ok, why);
const allTasks = groupActiveTasks;

test('a version-10 leader and a version-11 instance settle on version 10, then 11 when the older leaves', async () => {
  const b = instance(broker.dirs[1]!, 10);
  const a = instance(broker.dirs[0]!);
  const out = new TopicFollower(broker.bootstrap, 'vp-out', 1);
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  const send = (from: number, n: number) =>
    producer.sendBatch(
      Array.from({ length: n }, (_, i) => ({
        topic: 'vp-in',
        key: Buffer.from(`k${from + i}`),
        value: Buffer.from(`v${from + i}`),
      })),
    );
  try {
    out.start();
    await b.start();
    await waitUntil(
      () => b.state() === 'RUNNING' && activeTasks(b).length === 4,
      60_000,
      () => describeInstances(b),
    );
    await a.start();
    const settled = await waitForGroup(
      (v) =>
        v.state === 'Stable' &&
        v.members.length === 2 &&
        v.members.every(
          (m) => m.subscription?.version === 10 && m.assignment?.version === 10 && m.assignment.common === 10,
        ) &&
        allTasks(v).join() === '0_0,0_1,0_2,0_3' &&
        a.state() === 'RUNNING' &&
        b.state() === 'RUNNING' &&
        activeTasks(a).length + activeTasks(b).length === 4,
      () => describeInstances(a, b),
    );
    // a still says it could speak 11; b says 10.
    assert.deepEqual(settled.members.map((m) => m.subscription!.latestSupportedVersion).sort(), [10, 11]);
    assert.ok(activeTasks(a).length > 0 && activeTasks(b).length > 0, describeInstances(a, b));
    await send(0, 200);
    await waitUntil(
      () => out.records.length >= 200,
      60_000,
      () => `${out.records.length} of 200 out\n${describeInstances(a, b)}`,
    );
    assert.equal(new Set(out.records.map((r) => r.key)).size, 200);
    assert.ok(out.records.every((r) => r.value!.toString() === `V${r.key.slice(1)}`));

    // b leaves: a is told the group's commonly supported version is 11 and rises to it.
    await b.close();
    await waitForGroup(
      (v) =>
        v.state === 'Stable' &&
        v.members.length === 1 &&
        v.members[0]!.subscription?.version === 11 &&
        v.members[0]!.assignment?.version === 11 &&
        allTasks(v).join() === '0_0,0_1,0_2,0_3' &&
        a.state() === 'RUNNING',
      () => describeInstances(a),
    );
    await send(200, 100);
    await waitUntil(
      () => new Set(out.records.map((r) => r.key)).size >= 300,
      60_000,
      () => `${new Set(out.records.map((r) => r.key)).size} of 300 keys out\n${describeInstances(a)}`,
    );
  } finally {
    await a.close();
    await b.close();
    await out.stop();
    await producer.close();
  }
});
