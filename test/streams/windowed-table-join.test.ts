// A windowed aggregation's table can be read by the processors below it (Kafka's KStreamWindowAggregate,
// KStreamSlidingWindowAggregate and KStreamSessionWindowAggregate view()): a windowed key reads its window's
// aggregate. So two windowed counts join, as in Kafka, through a broker; in the test driver, session-windowed
// tables join on their sessions, a filtered windowed table reads through the filter, and a stream keyed by
// windows joins a windowed table.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  KeyValue,
  Materialized,
  Produced,
  Serdes,
  SessionWindows,
  StreamsBuilder,
  Suppressed,
  TimeWindows,
  TopologyTestDriver,
} from '../../src/streams/index.js';
import type { Windowed } from '../../src/streams/windows.js';
import { waitUntil } from '../helpers/wait.js';
import { TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();

const at = (w: Windowed<string>) => `${w.key}@${w.window.startMs}`;

describe('windowed tables join', () => {
  const broker = useStreamsBroker({ 'wtj-clicks': 1, 'wtj-views': 1, 'wtj-out': 1 }, 1);

  it('two windowed counts join per window through a broker', async () => {
    const builder = new StreamsBuilder();
    const perWindow = (topic: string) =>
      builder
        .stream(topic, Consumed.with(S, S))
        .groupByKey()
        .windowedBy(TimeWindows.ofSizeWithNoGrace(10_000))
        .count();
    perWindow('wtj-clicks')
      .join(perWindow('wtj-views'), (clicks, views) => `${clicks} clicks / ${views} views`)
      .toStream()
      .map((w, v) => KeyValue.pair(at(w), v))
      .to('wtj-out', Produced.with(S, S));
    const streams = new KafkaStreams(builder.build(), {
      'application.id': 'windowed-table-join',
      'bootstrap.servers': broker.bootstrap,
      'state.dir': broker.dirs[0]!,
      'commit.interval.ms': 100,
    });
    const follower = new TopicFollower(broker.bootstrap, 'wtj-out', 1);
    const producer = new Producer({ bootstrapServers: broker.bootstrap });
    follower.start();
    const send = (topic: string, key: string, timestamp: number) =>
      producer.send({ topic, key: Buffer.from(key), value: Buffer.from('x'), timestamp });
    try {
      await streams.start();
      await send('wtj-clicks', 'a', 1000);
      await send('wtj-clicks', 'a', 2000);
      await send('wtj-views', 'a', 3000);
      await send('wtj-views', 'a', 12_000); // the next window: no clicks there, no join
      await send('wtj-clicks', 'b', 4000); // no views of b: no join
      const expected = '2 clicks / 1 views';
      await waitUntil(
        () => follower.latest.get('a@0')?.toString() === expected,
        60_000,
        () => [...follower.latest].map(([k, v]) => `${k}=${v}`).join(', '),
      );
      assert.deepEqual([...follower.latest.keys()], ['a@0']);
    } finally {
      await producer.close();
      await streams.close();
      await follower.stop();
    }
  });

  it('session-windowed tables join on their sessions (test driver)', () => {
    const builder = new StreamsBuilder();
    const perSession = (topic: string) =>
      builder
        .stream(topic, Consumed.with(S, S))
        .groupByKey()
        .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(1000))
        .count();
    perSession('left')
      .join(perSession('right'), (l, r) => `${l}+${r}`)
      .toStream()
      .map((w, v) => KeyValue.pair(`${at(w)}-${w.window.endMs}`, v))
      .to('out', Produced.with(S, S));
    const driver = new TopologyTestDriver(builder.build(), { 'statestore.cache.max.bytes': 0 });
    try {
      driver.createInputTopic('left', S, S).pipeInput('a', 'x', 100);
      const right = driver.createInputTopic('right', S, S);
      right.pipeInput('a', 'x', 100);
      right.pipeInput('a', 'x', 5000); // another session: the left has none there
      assert.deepEqual(driver.createOutputTopic('out', S, S).readKeyValuesToList(), [
        KeyValue.pair('a@100-100', '1+1'),
      ]);
    } finally {
      driver.close();
    }
  });

  it('a stream keyed by windows joins a filtered windowed table (test driver)', () => {
    const builder = new StreamsBuilder();
    const counts = builder
      .stream('views', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(TimeWindows.ofSizeWithNoGrace(1000))
      .count()
      .filter((_w, n) => n >= 2);
    builder
      .stream('clicks', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(TimeWindows.ofSizeWithNoGrace(1000))
      .count()
      .toStream()
      .leftJoin(counts, (clicks, views) => `${clicks}/${views}`)
      .map((w, v) => KeyValue.pair(at(w), v))
      .to('out', Produced.with(S, S));
    const driver = new TopologyTestDriver(builder.build(), { 'statestore.cache.max.bytes': 0 });
    try {
      const views = driver.createInputTopic('views', S, S);
      views.pipeInput('a', 'x', 10);
      const clicks = driver.createInputTopic('clicks', S, S);
      clicks.pipeInput('a', 'x', 20);
      views.pipeInput('a', 'x', 30);
      clicks.pipeInput('a', 'x', 40);
      assert.deepEqual(driver.createOutputTopic('out', S, S).readKeyValuesToList(), [
        KeyValue.pair('a@0', '1/null'),
        KeyValue.pair('a@0', '2/2'),
      ]);
    } finally {
      driver.close();
    }
  });

  it('a suppressed windowed table reads a held window as before its updates (test driver)', () => {
    const builder = new StreamsBuilder();
    const views = builder
      .stream('views', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(TimeWindows.ofSizeWithNoGrace(1000))
      // Kept past its close, so that the view still finds a@0 in the store once the suppression lets it out.
      .count(Materialized.with(S, Serdes.Long()).withRetention(60_000))
      .suppress(Suppressed.untilWindowCloses());
    builder
      .stream('clicks', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(TimeWindows.ofSizeWithNoGrace(1000))
      .count()
      .toStream()
      .leftJoin(views, (clicks, v) => `${clicks}/${v}`)
      .map((w, v) => KeyValue.pair(at(w), v))
      .to('out', Produced.with(S, S));
    const driver = new TopologyTestDriver(builder.build(), { 'statestore.cache.max.bytes': 0 });
    try {
      const viewsIn = driver.createInputTopic('views', S, S);
      const clicks = driver.createInputTopic('clicks', S, S);
      viewsIn.pipeInput('a', 'x', 10);
      clicks.pipeInput('a', 'x', 20); // a@0's view count is held: the view reads none yet
      viewsIn.pipeInput('b', 'x', 2500); // stream time passes a@0's end: its count is let out
      clicks.pipeInput('a', 'x', 30);
      assert.deepEqual(driver.createOutputTopic('out', S, S).readKeyValuesToList(), [
        KeyValue.pair('a@0', '1/null'),
        KeyValue.pair('a@0', '2/1'),
      ]);
    } finally {
      driver.close();
    }
  });
});
