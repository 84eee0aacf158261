// SHUTDOWN_APPLICATION through a broker (KIP-671): two instances of one application; a processor throws in
// whichever instance reads the poisoned record, its handler answers SHUTDOWN_APPLICATION, and the request
// travels through the streams assignor's user data, so both instances end in ERROR, not only the failed one.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  type KafkaStreamsState,
  Produced,
  Serdes,
  StreamsBuilder,
} from '../../src/streams/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { stateDir } from './streams-helpers.js';

const S = Serdes.String();
let broker: BrokerProcess;
const dirs = [stateDir(), stateDir()];

before(async () => {
  broker = await startBroker({ overrides: { 'group.initial.rebalance.delay.ms': 0 } });
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  await admin.createTopics([
    { topic: 'sa-in', numPartitions: 2, replicationFactor: 1 },
    { topic: 'sa-out', numPartitions: 2, replicationFactor: 1 },
  ]);
  await admin.close();
});

after(async () => {
  await broker?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function instance(dir: string, errors: string[], states: KafkaStreamsState[]): KafkaStreams {
  const builder = new StreamsBuilder();
  builder
    .stream('sa-in', Consumed.with(S, S))
    .mapValues((v) => {
      if (v === 'poison') throw new Error('poisoned record');
      return v.toUpperCase();
    })
    .to('sa-out', Produced.with(S, S));
  const streams = new KafkaStreams(builder.build(), {
    'application.id': 'shutdown-app',
    'bootstrap.servers': broker.bootstrap,
    'state.dir': dir,
    'commit.interval.ms': 100,
    'session.timeout.ms': 6000,
    'heartbeat.interval.ms': 500,
  });
  streams.setStateListener((s) => states.push(s));
  streams.setUncaughtExceptionHandler((e) => {
    // The StreamsException of processing.exception.handler's default (LogAndFail), the processor's error its cause.
    errors.push((e.cause as Error).message);
    return 'SHUTDOWN_APPLICATION';
  });
  return streams;
}

test('SHUTDOWN_APPLICATION in one instance stops every instance of the application', async () => {
  const errors: string[] = [];
  const statesA: KafkaStreamsState[] = [];
  const statesB: KafkaStreamsState[] = [];
  const a = instance(dirs[0]!, errors, statesA);
  const b = instance(dirs[1]!, errors, statesB);
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  const describe = () => `a: ${statesA.join('>')}\nb: ${statesB.join('>')}\nerrors: ${errors.join(', ')}`;
  try {
    await a.start();
    await b.start();
    const tasks = (s: KafkaStreams) => s.metadataForLocalThreads().flatMap((t) => t.activeTasks).length;
    await waitUntil(
      () => a.state() === 'RUNNING' && b.state() === 'RUNNING' && tasks(a) === 1 && tasks(b) === 1,
      60_000,
      describe,
    );
    await producer.send({ topic: 'sa-in', key: Buffer.from('k'), value: Buffer.from('poison') });
    await waitUntil(() => a.state() === 'ERROR' && b.state() === 'ERROR', 60_000, describe);
    assert.deepEqual(errors, ['poisoned record'], 'one instance failed; the other stopped on request');
    for (const states of [statesA, statesB]) assert.deepEqual(states.slice(-2), ['PENDING_ERROR', 'ERROR']);
  } finally {
    await producer.close();
    await a.close();
    await b.close();
  }
});
