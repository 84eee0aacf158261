// Rack-aware standby placement (KIP-708) through a broker: three instances tagged client.tag.zone z1, z1, z2
// with rack.aware.assignment.tags=zone and num.standby.replicas=1 run three tasks; the standbys of the two
// tasks active in z1 are both kept by the z2 instance, so losing a zone loses no task's only state. The
// configuration is checked as Kafka checks it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  Consumed,
  KafkaStreams,
  Materialized,
  Serdes,
  StreamsBuilder,
  StreamsConfigError,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { activeTasks, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const INPUT = 'ra-input';

const broker = useStreamsBroker({ [INPUT]: 3 }, 3);
const dirs = broker.dirs;

function topology() {
  const builder = new StreamsBuilder();
  builder.stream(INPUT, Consumed.with(S, S)).groupByKey().count(Materialized.as('ra-counts'));
  return builder.build();
}

function instance(dir: string, zone: string): KafkaStreams {
  return new KafkaStreams(topology(), {
    'application.id': 'ra-app',
    'bootstrap.servers': broker.bootstrap,
    'state.dir': dir,
    'num.standby.replicas': 1,
    'rack.aware.assignment.tags': 'zone',
    'client.tag.zone': zone,
    'commit.interval.ms': 200,
    'session.timeout.ms': 10000,
    'heartbeat.interval.ms': 500,
  });
}

test('standbys go to another zone than their active task', async () => {
  const zones = ['z1', 'z1', 'z2'];
  const instances = zones.map((z, i) => instance(dirs[i]!, z));
  const [a, b, c] = instances as [KafkaStreams, KafkaStreams, KafkaStreams];
  const describe = () =>
    instances
      .map(
        (s, i) =>
          `${'abc'[i]} (${zones[i]}): ${s.state()} active ${activeTasks(s).join(',')} standby ${s.standbyTaskIds().join(',')}`,
      )
      .join('\n');
  try {
    for (const s of instances) await s.start();
    await waitUntil(
      () =>
        instances.every((s) => s.state() === 'RUNNING' && activeTasks(s).length === 1) &&
        c.standbyTaskIds().join() === [...activeTasks(a), ...activeTasks(b)].sort().join(),
      90_000,
      describe,
    );
    // c's own task has its standby in z1, on a or b.
    const cTask = activeTasks(c)[0]!;
    assert.deepEqual(
      [...a.standbyTaskIds(), ...b.standbyTaskIds()],
      [cTask],
      'the z2 task has one standby, in z1',
    );
  } finally {
    for (const s of instances) await s.close();
  }
});

test('rack.aware.assignment.tags must name client tags; Kafka limits tags', () => {
  const base = { 'application.id': 'x', 'bootstrap.servers': 'localhost:1' };
  assert.throws(
    () => new KafkaStreams(topology(), { ...base, 'rack.aware.assignment.tags': 'zone' }),
    (e: unknown) => e instanceof StreamsConfigError && /doesn't have corresponding tag/.test(e.message),
  );
  assert.throws(
    () => new KafkaStreams(topology(), { ...base, 'client.tag.zone': 'x'.repeat(31) }),
    StreamsConfigError,
  );
  const six = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`client.tag.t${i}`, 'v']));
  assert.throws(() => new KafkaStreams(topology(), { ...base, ...six }), StreamsConfigError);
});
