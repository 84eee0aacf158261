// A segmented store reopened from its local files starts without a stream time, as Kafka's
// AbstractRocksDBSegmentedBytesStore (observedStreamTime is -1 until a write or a restored changelog record moves
// it; the segments found on disk do not): until then it reads every entry its live segments keep. Through a broker,
// with a restart: a stream-stream join (30 s each way, no grace: retention 60 s, segments of 60 s) keeps a left
// record at B (B a segment start) and one at B + 65 s, which hides the first one from reads (stream time minus
// retention is B + 5 s) though its segment lives. After a clean close and a restart on the same state directory, a
// right record at B + 25 s finds the left one at B, as in Kafka; the left store's stream time, taken from its newest
// segment's start (B + 60 s), used to hide it still.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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
import { waitUntil } from '../helpers/wait.js';
import { TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const APP = 'sr-app';

function topology(): StreamsBuilder {
  const builder = new StreamsBuilder();
  builder
    .stream('sr-left', Consumed.with(S, S))
    .join(
      builder.stream('sr-right', Consumed.with(S, S)),
      (l, r) => `${l}+${r}`,
      JoinWindows.ofTimeDifferenceWithNoGrace(30_000),
      StreamJoined.with(S, S, S).withStoreName('sr'),
    )
    .to('sr-out', Produced.with(S, S));
  return builder;
}

describe('a segmented store reopened from its files', () => {
  const env = useStreamsBroker({ 'sr-left': 1, 'sr-right': 1, 'sr-out': 1 }, 1);

  const start = async () => {
    const streams = new KafkaStreams(topology().build(), {
      'application.id': APP,
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[0]!,
      'commit.interval.ms': 100,
      // A closed instance does not leave the group (as Kafka's): the next one waits for its session to end.
      'session.timeout.ms': 6000,
    });
    await streams.start();
    return streams;
  };

  it('has no stream time until a write, so it reads what its segments keep, as Kafka', async () => {
    const base = Math.floor(Date.now() / 60_000) * 60_000 - 120_000;
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const send = (topic: string, key: string, value: string, timestamp: number) =>
      producer.send({ topic, key: Buffer.from(key), value: Buffer.from(value), timestamp });
    const changelog = new TopicFollower(env.bootstrap, `${APP}-sr-this-join-store-changelog`, 1);
    const out = new TopicFollower(env.bootstrap, 'sr-out', 1);
    try {
      let streams = await start();
      changelog.start();
      await send('sr-left', 'a', 'old', base);
      await send('sr-left', 'z', 'new', base + 65_000);
      await waitUntil(
        () => changelog.records.length === 2,
        60_000,
        () => `${changelog.records.length} logged`,
      );
      await streams.close();

      streams = await start();
      out.start();
      try {
        await send('sr-right', 'a', 'late', base + 25_000);
        // A marker that joins in any case: once it is out, the late record was processed before it.
        await send('sr-right', 'z', 'marker', base + 65_000);
        const joined = () => out.records.map((r) => `${r.key}=${r.value?.toString('utf8')}`);
        await waitUntil(
          () => joined().includes('z=new+marker'),
          60_000,
          () => joined().join(', '),
        );
        assert.deepEqual(joined(), ['a=old+late', 'z=new+marker']);
      } finally {
        await streams.close();
      }
    } finally {
      await changelog.stop();
      await out.stop();
      await producer.close();
    }
  });
});
