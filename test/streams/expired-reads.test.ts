// Reads of a segmented store see no record older than its retention, even one whose segment is still live (Kafka
// 3.4+, KAFKA-12960: AbstractRocksDBSegmentedBytesStore's get and fetch start at observedStreamTime - retention + 1).
// Through a broker: a stream-stream join (retention 20 s) whose late right record finds its left partner stored
// 35 s before the store's stream time, in a segment (one minute wide) still live: Kafka joins nothing there.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  JoinWindows,
  KafkaStreams,
  Produced,
  Serdes,
  StreamJoined,
  StreamsBuilder,
} from '../../src/streams/index.js';
import { useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();

/** Records "L..." joined with records "R..." of one topic (one partition: processed in offset order). */
function leftRightJoin(input: string, out: string): StreamsBuilder {
  const builder = new StreamsBuilder();
  const stream = builder.stream(input, Consumed.with(S, S));
  stream
    .filter((_k, v) => v.startsWith('L'))
    .join(
      stream.filter((_k, v) => v.startsWith('R')),
      (l, r) => `${l}+${r}`,
      JoinWindows.ofTimeDifferenceWithNoGrace(10_000),
      StreamJoined.with(S, S, S),
    )
    .to(out, Produced.with(S, S));
  return builder;
}

describe('expired records in segmented stores', () => {
  const env = useStreamsBroker({ 'exp-in': 1, 'exp-out': 1 }, 1);

  it('are not read: a late record does not join a partner older than the retention', async () => {
    const props = {
      'application.id': 'exp-app',
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[0]!,
      'commit.interval.ms': 100,
    };
    const streams = new KafkaStreams(leftRightJoin('exp-in', 'exp-out').build(), props);
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const consumer = new Consumer({ bootstrapServers: env.bootstrap, autoOffsetReset: 'earliest' });
    try {
      await streams.start();
      const input: [string, number][] = [
        ['L1', 5_000],
        ['R1', 5_000],
        ['L2', 40_000],
        ['R2', 40_000],
        // Late: its window [0, 18000] holds L1@5000, which is before the left store's 40000 - 20000 + 1.
        ['R3', 8_000],
        // A marker after it, so the test knows R3 was processed.
        ['L9', 41_000],
        ['R9', 41_000],
      ];
      for (const [value, timestamp] of input)
        await producer.send({ topic: 'exp-in', key: Buffer.from('k'), value: Buffer.from(value), timestamp });
      consumer.assign([{ topic: 'exp-out', partition: 0 }]);
      const seen: string[] = [];
      for (const deadline = Date.now() + 60_000; Date.now() < deadline && !seen.includes('L9+R9@41000'); )
        for (const r of await consumer.poll(200)) seen.push(`${r.value!.toString('utf8')}@${r.timestamp}`);
      assert.deepEqual(seen, ['L1+R1@5000', 'L2+R2@40000', 'L9+R2@41000', 'L2+R9@41000', 'L9+R9@41000']);
    } finally {
      await streams.close();
      await consumer.close();
      await producer.close();
    }
  });
});
