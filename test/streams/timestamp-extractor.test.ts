// default.timestamp.extractor through a broker, for an input record whose timestamp is negative (-1, as old
// producers wrote them). Kafka's default, FailOnInvalidTimestamp, fails with a StreamsException (the uncaught
// exception handler decides; here SHUTDOWN_CLIENT, Kafka's default, and the client ends in ERROR);
// LogAndSkipOnInvalidTimestamp skips the record; WallclockTimestampExtractor gives every record the time it is
// processed. The global thread takes no extractor, as Kafka's GlobalStateUpdateTask: a global store takes a
// record with a negative timestamp like any other.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  type KafkaStreamsState,
  Materialized,
  Produced,
  QueryableStoreTypes,
  Serdes,
  StoreQueryParameters,
  StreamsBuilder,
  type StreamsProperties,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const CASES = ['fail', 'skip', 'wall'] as const;

function upperCase(input: string, output: string) {
  const builder = new StreamsBuilder();
  builder
    .stream(input, Consumed.with(S, S))
    .mapValues((v) => v.toUpperCase())
    .to(output, Produced.with(S, S));
  return builder.build();
}

describe('default.timestamp.extractor and negative timestamps', () => {
  const topics = Object.fromEntries([
    ...CASES.flatMap((c) => [[`in-${c}`, 1] as const, [`out-${c}`, 1] as const]),
    ['global-in', 1] as const,
    ['global-stream', 1] as const,
  ]);
  const cluster = useStreamsBroker(topics, CASES.length + 1);

  /** Runs the upper-case app on `a` (time 100), `b` (time -1), `c` (time 200); answers its output and states. */
  async function run(
    name: (typeof CASES)[number],
    props: StreamsProperties,
    done: (out: string[], state: KafkaStreamsState) => boolean,
  ): Promise<{ out: string[]; states: KafkaStreamsState[]; errors: string[] }> {
    const streams = new KafkaStreams(upperCase(`in-${name}`, `out-${name}`), {
      'application.id': `tsx-${name}`,
      'bootstrap.servers': cluster.bootstrap,
      'commit.interval.ms': 100,
      'state.dir': cluster.dirs[CASES.indexOf(name)]!,
      ...props,
    });
    const states: KafkaStreamsState[] = [];
    streams.setStateListener((s) => states.push(s));
    const errors: string[] = [];
    streams.setUncaughtExceptionHandler((e) => {
      errors.push(e.message);
      return 'SHUTDOWN_CLIENT';
    });
    const follower = new TopicFollower(cluster.bootstrap, `out-${name}`, 1);
    const producer = new Producer({ bootstrapServers: cluster.bootstrap });
    follower.start();
    try {
      await producer.sendBatch(
        (
          [
            ['a', 100],
            ['b', -1],
            ['c', 200],
          ] as const
        ).map(([v, timestamp]) => ({
          topic: `in-${name}`,
          key: Buffer.from('k'),
          value: Buffer.from(v),
          timestamp,
        })),
      );
      await streams.start();
      const values = () => follower.records.map((r) => r.value!.toString());
      await waitUntil(
        () => done(values(), streams.state()),
        60_000,
        () => `out ${values().join(',')}; states ${states.join(',')}; errors ${errors.join(' | ')}`,
      );
      await new Promise((r) => setTimeout(r, 300)); // room for an unwanted record to show up
      return { out: values(), states, errors };
    } finally {
      await streams.close();
      await follower.stop();
      await producer.close();
    }
  }

  it('by default (FailOnInvalidTimestamp) the record fails its thread: StreamsException, client in ERROR', async () => {
    const { out, states, errors } = await run('fail', {}, (_out, state) => state === 'ERROR');
    assert.deepEqual(out, ['A']);
    assert.equal(errors.length, 1);
    assert.match(errors[0]!, /in-fail-0 at offset 1 has invalid \(negative\) timestamp -1/);
    assert.deepEqual(states.slice(-2), ['PENDING_ERROR', 'ERROR']);
  });

  it('LogAndSkipOnInvalidTimestamp skips the record', async () => {
    const { out, states, errors } = await run(
      'skip',
      { 'default.timestamp.extractor': 'org.apache.kafka.streams.processor.LogAndSkipOnInvalidTimestamp' },
      (out) => out.includes('C'),
    );
    assert.deepEqual(out, ['A', 'C']);
    assert.deepEqual(errors, []);
    assert.ok(!states.includes('ERROR'));
  });

  it('WallclockTimestampExtractor processes every record, at the time it is processed', async () => {
    const { out, errors } = await run(
      'wall',
      { 'default.timestamp.extractor': 'WallclockTimestampExtractor' },
      (out) => out.includes('C'),
    );
    assert.deepEqual(out, ['A', 'B', 'C']);
    assert.deepEqual(errors, []);
  });

  it('the global thread applies no extractor: a negative timestamp reaches the global store', async () => {
    const builder = new StreamsBuilder();
    builder.globalTable('global-in', Consumed.with(S, S), Materialized.as('global-names'));
    builder.stream('global-stream', Consumed.with(S, S)).foreach(() => {});
    const streams = new KafkaStreams(builder.build(), {
      'application.id': 'tsx-global',
      'bootstrap.servers': cluster.bootstrap,
      'state.dir': cluster.dirs[CASES.length]!,
    });
    const errors: string[] = [];
    streams.setUncaughtExceptionHandler((e) => {
      errors.push(e.message);
      return 'SHUTDOWN_CLIENT';
    });
    const producer = new Producer({ bootstrapServers: cluster.bootstrap });
    try {
      const records = [
        ['k1', 'a', 100],
        ['k2', 'b', -1],
        ['k3', 'c', 200],
      ] as const;
      await producer.sendBatch(
        records.map(([k, v, timestamp]) => ({
          topic: 'global-in',
          key: Buffer.from(k),
          value: Buffer.from(v),
          timestamp,
        })),
      );
      // The global stores are loaded to the topic's end before start() returns; queries wait for RUNNING.
      await streams.start();
      await waitUntil(
        () => streams.state() === 'RUNNING',
        30_000,
        () => `state ${streams.state()}; errors ${errors.join(' | ')}`,
      );
      const store = streams.store(
        StoreQueryParameters.fromNameAndType(
          'global-names',
          QueryableStoreTypes.keyValueStore<string, string>(),
        ),
      );
      assert.deepEqual(
        store
          .all()
          .map((e) => `${e.key}=${e.value}`)
          .sort(),
        ['k1=a', 'k2=b', 'k3=c'],
      );
      assert.deepEqual(errors, []);
      assert.notEqual(streams.state(), 'ERROR');
    } finally {
      await streams.close();
      await producer.close();
    }
  });
});
