// The uncaught exception handler through a broker: a processor throws once; with REPLACE_THREAD a new thread
// takes the failed one's place and processing goes on (the failing record processed again, at least once);
// without a handler the client shuts down (SHUTDOWN_CLIENT, Kafka's default) and ends in ERROR, its process id
// released for a later instance.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
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
import { stateDir, TopicFollower } from './streams-helpers.js';

const S = Serdes.String();

function throwingOnce(
  input: string,
  output: string,
): { topology: ReturnType<StreamsBuilder['build']>; thrown: () => number } {
  let thrown = 0;
  const builder = new StreamsBuilder();
  builder
    .stream(input, Consumed.with(S, S))
    .mapValues((v) => {
      if (v === 'boom' && thrown === 0) {
        thrown++;
        throw new Error('boom');
      }
      return v.toUpperCase();
    })
    .to(output, Produced.with(S, S));
  return { topology: builder.build(), thrown: () => thrown };
}

describe('uncaught exception handler', () => {
  let broker: BrokerProcess;
  const dir = stateDir();

  before(async () => {
    broker = await startBroker();
    const admin = new Admin({ bootstrapServers: broker.bootstrap });
    await admin.createTopics(
      ['in-1', 'out-1', 'in-2', 'out-2'].map((topic) => ({ topic, numPartitions: 1, replicationFactor: 1 })),
    );
    await admin.close();
  });

  after(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function produce(topic: string, values: string[]): Promise<void> {
    const producer = new Producer({ bootstrapServers: broker.bootstrap });
    await producer.sendBatch(values.map((v) => ({ topic, key: Buffer.from('k'), value: Buffer.from(v) })));
    await producer.close();
  }

  it('REPLACE_THREAD: a new thread replaces the failed one and processing goes on', async () => {
    const { topology, thrown } = throwingOnce('in-1', 'out-1');
    const streams = new KafkaStreams(topology, {
      'application.id': 'replace-thread',
      'bootstrap.servers': broker.bootstrap,
      'state.dir': dir,
      'commit.interval.ms': 100,
    });
    const errors: string[] = [];
    const states: KafkaStreamsState[] = [];
    streams.setStateListener((s) => states.push(s));
    streams.setUncaughtExceptionHandler((e) => {
      errors.push(`${e.message} (${(e.cause as Error).message})`);
      return 'REPLACE_THREAD';
    });
    const follower = new TopicFollower(broker.bootstrap, 'out-1', 1);
    follower.start();
    try {
      await streams.start();
      await produce('in-1', ['a', 'boom', 'b']);
      await waitUntil(
        () => follower.records.some((r) => r.value?.toString() === 'B'),
        60_000,
        () =>
          `out: ${follower.records.map((r) => r.value?.toString()).join(',')}; states ${states.join(',')}`,
      );
      const values = new Set(follower.records.map((r) => r.value!.toString()));
      assert.deepEqual([...values].sort(), ['A', 'B', 'BOOM']);
      assert.equal(thrown(), 1);
      // processing.exception.handler's default (LogAndFail) ends the thread with Kafka's StreamsException.
      assert.deepEqual(errors, [
        'Exception caught in process. taskId=0_0, processor=KSTREAM-SOURCE-0000000000, topic=in-1, partition=0, offset=1 (boom)',
      ]);
      await waitUntil(
        () => streams.state() === 'RUNNING',
        30_000,
        () => streams.state(),
      );
      assert.ok(!states.includes('ERROR'));
    } finally {
      await streams.close();
      await follower.stop();
    }
  });

  it('without a handler the client shuts down and ends in ERROR', async () => {
    const { topology } = throwingOnce('in-2', 'out-2');
    const streams = new KafkaStreams(topology, {
      'application.id': 'shutdown-client',
      'bootstrap.servers': broker.bootstrap,
      'state.dir': dir,
      'commit.interval.ms': 100,
    });
    const states: KafkaStreamsState[] = [];
    streams.setStateListener((s) => states.push(s));
    try {
      await streams.start();
      await produce('in-2', ['boom']);
      await waitUntil(
        () => streams.state() === 'ERROR',
        30_000,
        () => states.join(','),
      );
      assert.deepEqual(states.slice(-2), ['PENDING_ERROR', 'ERROR']);
      // Ending in ERROR released the state directory's process id: a later instance of this process takes it.
      const next = new KafkaStreams(topology, {
        'application.id': 'shutdown-client',
        'bootstrap.servers': broker.bootstrap,
        'state.dir': dir,
      });
      try {
        assert.equal(next.processId, streams.processId);
      } finally {
        await next.close();
      }
    } finally {
      await streams.close();
    }
  });
});
