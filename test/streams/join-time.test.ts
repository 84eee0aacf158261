// The time of a stream-stream join, as Kafka's KStreamKStreamJoin keeps it: a time of its own per task, advanced
// only by the records that reach one of the join's two processors. A record the task reads but drops before the
// join (here, by a filter) does not close the join's windows, so a later record inside the window still joins
// and a waiting left-join record is not emitted with null early. Both sides come from one single-partition topic
// (split by the value's prefix), so the task processes the records in the order they were produced.

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
import { TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const WINDOW_MS = 100;

/** Left records "L:<v>", right records "R:<v>"; anything else is dropped before the join. */
function leftJoinTopology(input: string, output: string) {
  const builder = new StreamsBuilder();
  const events = builder.stream(input, Consumed.with(S, S));
  const side = (prefix: string) =>
    events.filter((_k, v) => v.startsWith(prefix)).mapValues((v) => v.slice(prefix.length));
  side('L:')
    .leftJoin(side('R:'), (l, r) => `${l}+${r ?? 'null'}`, JoinWindows.ofTimeDifferenceWithNoGrace(WINDOW_MS))
    .to(output, Produced.with(S, S));
  return builder.build();
}

describe('stream-stream join time', () => {
  const env = useStreamsBroker({ 'jt-events': 1, 'jt-joined': 1 }, 1);

  it('a record filtered out before a left join does not advance the join time', async () => {
    const streams = new KafkaStreams(leftJoinTopology('jt-events', 'jt-joined'), {
      'application.id': 'join-time',
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[0]!,
      'commit.interval.ms': 100,
    });
    const follower = new TopicFollower(env.bootstrap, 'jt-joined', 1);
    const producer = new Producer({ bootstrapServers: env.bootstrap });
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
    follower.start();
    try {
      await streams.start();
      await producer.sendBatch(
        sent.map((r) => ({
          topic: 'jt-events',
          key: Buffer.from(r.key),
          value: Buffer.from(r.value),
          timestamp: r.timestamp,
        })),
      );
      await waitUntil(
        () => streams.processedRecords() >= sent.length && follower.records.length >= 2,
        30_000,
        () => `processed ${streams.processedRecords()}, ${follower.records.length} results`,
      );
      await new Promise((r) => setTimeout(r, 300)); // room for an unwanted extra result to show up
      assert.deepEqual(
        follower.records.map((r) => `${r.key}:${r.value?.toString()}`),
        ['k1:a+b', 'k2:c+null'],
      );
    } finally {
      await producer.close();
      await follower.stop();
      await streams.close();
    }
  });
});
