// The time of a stream-stream join, as Kafka's KStreamKStreamJoin keeps it: a time of its own per task, advanced
// only by the records that reach one of the join's two processors. A record the task reads but drops before the
// join (here, by a filter) does not close the join's windows, so a later record inside the window still joins
// and a waiting left-join record is not emitted with null early. Both sides come from one single-partition topic
// (split by the value's prefix), so the task processes the records in the order they were produced.
// Also: unmatched records of one key and timestamp wait side by side (Kafka's list store) and each goes out.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  JoinWindows,
  KafkaStreams,
  Produced,
  Serdes,
  StreamsBuilder,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { type StreamsBroker, TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const WINDOW_MS = 100;
/** Kafka's StreamsConfig.InternalConfig.EMIT_INTERVAL_MS_KSTREAMS_OUTER_JOIN_SPURIOUS_RESULTS_FIX. */
const OUTER_JOIN_EMIT_INTERVAL = '__emit.interval.ms.kstreams.outer.join.spurious.results.fix__';

/** Left records "L:<v>", right records "R:<v>"; anything else is dropped before the join. */
function leftJoinTopology(input: string, output: string, windows: JoinWindows) {
  const builder = new StreamsBuilder();
  const events = builder.stream(input, Consumed.with(S, S));
  const side = (prefix: string) =>
    events.filter((_k, v) => v.startsWith(prefix)).mapValues((v) => v.slice(prefix.length));
  side('L:')
    .leftJoin(side('R:'), (l, r) => `${l}+${r ?? 'null'}`, windows)
    .to(output, Produced.with(S, S));
  return builder.build();
}

interface Sent {
  key: string;
  value: string;
  timestamp: number;
}

/** Runs a left join over `sent` until the task has processed it all, and answers the join's results. */
async function leftJoinResults(
  env: StreamsBroker,
  name: string,
  windows: JoinWindows,
  sent: Sent[],
  minResults: number,
): Promise<string[]> {
  const [input, output] = [`${name}-events`, `${name}-joined`];
  const streams = new KafkaStreams(leftJoinTopology(input, output, windows), {
    'application.id': name,
    'bootstrap.servers': env.bootstrap,
    'state.dir': env.dirs[0]!,
    'commit.interval.ms': 100,
    // Scans for windows that closed after every record, not once per second (Kafka's tests set it so too).
    [OUTER_JOIN_EMIT_INTERVAL]: 0,
  });
  const follower = new TopicFollower(env.bootstrap, output, 1);
  const producer = new Producer({ bootstrapServers: env.bootstrap });
  follower.start();
  try {
    await streams.start();
    await producer.sendBatch(
      sent.map((r) => ({
        topic: input,
        key: Buffer.from(r.key),
        value: Buffer.from(r.value),
        timestamp: r.timestamp,
      })),
    );
    await waitUntil(
      () => streams.processedRecords() >= sent.length && follower.records.length >= minResults,
      30_000,
      () => `processed ${streams.processedRecords()}, ${follower.records.length} results`,
    );
    await new Promise((r) => setTimeout(r, 300)); // room for an unwanted extra result to show up
    return follower.records.map((r) => `${r.key}:${r.value?.toString()}`);
  } finally {
    await producer.close();
    await follower.stop();
    await streams.close();
  }
}

describe('stream-stream join time', () => {
  const env = useStreamsBroker(
    {
      'jt-events': 1,
      'jt-joined': 1,
      'jt-grace-events': 1,
      'jt-grace-joined': 1,
      'jt-dup-events': 1,
      'jt-dup-joined': 1,
      'jt-emit-events': 1,
      'jt-emit-joined': 1,
    },
    1,
  );

  it('a record filtered out before a left join does not advance the join time', async () => {
    const sent = [
      { key: 'k1', value: 'L:a', timestamp: 1000 },
      // Read by the task (its stream time becomes 5000) but never reaches the join.
      { key: 'k9', value: 'X:dropped', timestamp: 5000 },
      // Inside a's window against the join's time (1050): a joins b, and a is no longer waiting.
      { key: 'k1', value: 'R:b', timestamp: 1050 },
      { key: 'k2', value: 'L:c', timestamp: 1300 },
      // The join's time passes c's window end (1400): c is emitted with null.
      { key: 'k3', value: 'R:d', timestamp: 1500 },
    ];
    const results = await leftJoinResults(
      env,
      'jt',
      JoinWindows.ofTimeDifferenceWithNoGrace(WINDOW_MS),
      sent,
      2,
    );
    assert.deepEqual(results, ['k1:a+b', 'k2:c+null']);
  });

  it('an out-of-order left record past its window end is emitted with null at once, grace or not', async () => {
    const sent = [
      { key: 'kx', value: 'R:x', timestamp: 1120 },
      // Its window ends at 1110, before the join's time, though within the grace (50 ms): emitted at once.
      { key: 'k', value: 'L:e', timestamp: 1010 },
      // Still within the grace of the window stores: it joins e as well.
      { key: 'k', value: 'R:f', timestamp: 1100 },
      { key: 'ky', value: 'L:g', timestamp: 1400 },
    ];
    const windows = JoinWindows.ofTimeDifferenceAndGrace(WINDOW_MS, 50);
    const results = await leftJoinResults(env, 'jt-grace', windows, sent, 2);
    assert.deepEqual(results, ['k:e+null', 'k:e+f']);
  });

  it('unmatched left records of one key and timestamp are each emitted with null', async () => {
    // Kafka's outer-join store keeps a list of values per (timestamp, side, key): none is lost to another.
    const sent = [
      { key: 'k', value: 'L:a', timestamp: 1000 },
      { key: 'k', value: 'L:b', timestamp: 1000 },
      { key: 'k', value: 'L:c', timestamp: 1000 },
      // Closes their window (1100): all three go out with null, in the order they came.
      { key: 'kz', value: 'R:z', timestamp: 1500 },
    ];
    const windows = JoinWindows.ofTimeDifferenceWithNoGrace(WINDOW_MS);
    const results = await leftJoinResults(env, 'jt-dup', windows, sent, 3);
    assert.deepEqual(results, ['k:a+null', 'k:b+null', 'k:c+null']);
  });

  it('the outer-join store is scanned at most once per wall-clock second, as Kafka throttles it', async () => {
    // Kafka's KStreamKStreamJoin scans its outer store at most once per OUTER_JOIN_EMIT_INTERVAL (1000 ms of
    // wall-clock time by default), so a record whose window closed may wait for a record after that time.
    const [input, output] = ['jt-emit-events', 'jt-emit-joined'];
    const windows = JoinWindows.ofTimeDifferenceWithNoGrace(WINDOW_MS);
    const streams = new KafkaStreams(leftJoinTopology(input, output, windows), {
      'application.id': 'jt-emit',
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[0]!,
      'commit.interval.ms': 100,
    });
    const follower = new TopicFollower(env.bootstrap, output, 1);
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const send = (records: Sent[]) =>
      producer.sendBatch(
        records.map((r) => ({
          topic: input,
          key: Buffer.from(r.key),
          value: Buffer.from(r.value),
          timestamp: r.timestamp,
        })),
      );
    const results = () => follower.records.map((r) => `${r.key}:${r.value?.toString()}`);
    follower.start();
    try {
      await streams.start();
      await send([
        // The first record the join sees scans its (empty) store: the next scan may come a second later.
        { key: 'k1', value: 'L:a', timestamp: 1000 },
        // Closes a's window within that second: a waits.
        { key: 'kx', value: 'R:x', timestamp: 1500 },
      ]);
      await waitUntil(
        () => streams.processedRecords() >= 2,
        30_000,
        () => `processed ${streams.processedRecords()}`,
      );
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(results(), []);
      await new Promise((r) => setTimeout(r, 1000));
      // The first record after the second has passed lets the scan run: a goes out.
      await send([{ key: 'ky', value: 'R:y', timestamp: 1600 }]);
      await waitUntil(
        () => follower.records.length >= 1,
        30_000,
        () => results().join(' '),
      );
      assert.deepEqual(results(), ['k1:a+null']);
    } finally {
      await producer.close();
      await follower.stop();
      await streams.close();
    }
  });
});
