// Windowed aggregations, suppress and stream-table joins in the test driver, each against a reference worked
// out by hand from Kafka's rules (window boundaries, grace, the closing of a window, join semantics).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Consumed,
  Grouped,
  Joined,
  Materialized,
  Produced,
  Serdes,
  StreamsBuilder,
  Suppressed,
  TimeWindows,
  TopologyTestDriver,
  type Windowed,
  WindowedSerdes,
} from '../../src/streams/index.js';

const S = Serdes.String();
const L = Serdes.Long();

describe('windowed aggregations', () => {
  it('TimeWindows assigns tumbling and hopping windows as Kafka does', () => {
    assert.deepEqual(TimeWindows.ofSizeWithNoGrace(10).windowsFor(25), [20]);
    assert.deepEqual(TimeWindows.ofSizeWithNoGrace(10).advanceBy(5).windowsFor(25), [20, 25]);
    assert.deepEqual(TimeWindows.ofSizeWithNoGrace(10).advanceBy(5).windowsFor(3), [0]);
    assert.throws(() => TimeWindows.ofSizeWithNoGrace(10).advanceBy(11), RangeError);
  });

  it('the windowed serde writes the key then the window start as an 8-byte long', () => {
    const serde = WindowedSerdes.timeWindowedSerdeFrom(S, 1000);
    const bytes = serde.serialize('t', {
      key: 'ab',
      window: { startMs: 3000, endMs: 4000 },
    } as unknown as Windowed<string>);
    assert.deepEqual(bytes, Buffer.concat([Buffer.from('ab'), Buffer.from('0000000000000bb8', 'hex')]));
    const back = serde.deserialize('t', bytes)!;
    assert.deepEqual([back.key, back.window.start(), back.window.end()], ['ab', 3000, 4000]);
  });

  it('counts per key and window, accepts late records within grace and drops them after', () => {
    const builder = new StreamsBuilder();
    builder
      .stream('views', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(TimeWindows.ofSizeAndGrace(100, 50))
      .count(Materialized.as('views-per-window'))
      .toStream()
      .to('view-counts', Produced.with(WindowedSerdes.timeWindowedSerdeFrom(S, 100), L));
    const driver = new TopologyTestDriver(builder.build());
    try {
      const input = driver.createInputTopic('views', S, S);
      input.pipeInput('home', 'u1', 10);
      input.pipeInput('home', 'u2', 120);
      input.pipeInput('home', 'u3', 90); // late for [0,100) but within grace (stream time 120 < 100 + 50)
      input.pipeInput('about', 'u1', 160);
      input.pipeInput('home', 'u4', 40); // too late: stream time 160 >= 100 + 50, window [0,100) closed
      const out = driver
        .createOutputTopic('view-counts', WindowedSerdes.timeWindowedSerdeFrom(S, 100), L)
        .readKeyValuesToList()
        .map((kv) => `${kv.key!.key}@${kv.key!.window.start()}=${kv.value}`);
      assert.deepEqual(out, ['home@0=1', 'home@100=1', 'home@0=2', 'about@100=1']);
      const store = driver.getTimestampedWindowStore<string, number>('views-per-window')!;
      assert.deepEqual(
        store.fetchRange('home', 0, 1000).map((w) => [w.windowStartMs, w.value.value, w.value.timestamp]),
        [
          [0, 2, 90],
          [100, 1, 120],
        ],
      );
    } finally {
      driver.close();
    }
  });

  it('hopping windows count a record in each window it falls in', () => {
    const builder = new StreamsBuilder();
    builder
      .stream('clicks', Consumed.with(S, S))
      .groupBy((_k, v) => v, Grouped.with(S, S))
      .windowedBy(TimeWindows.ofSizeWithNoGrace(10).advanceBy(5))
      .count()
      .toStream()
      .to('click-counts', Produced.with(WindowedSerdes.timeWindowedSerdeFrom(S, 10), L));
    const driver = new TopologyTestDriver(builder.build());
    try {
      const input = driver.createInputTopic('clicks', S, S);
      input.pipeInput('x', 'ad', 7);
      input.pipeInput('y', 'ad', 12);
      const out = driver
        .createOutputTopic('click-counts', WindowedSerdes.timeWindowedSerdeFrom(S, 10), L)
        .readKeyValuesToList()
        .map((kv) => `${kv.key!.key}@${kv.key!.window.start()}=${kv.value}`);
      assert.deepEqual(out, ['ad@0=1', 'ad@5=1', 'ad@5=2', 'ad@10=1']);
    } finally {
      driver.close();
    }
  });
});

describe('suppress', () => {
  it('untilWindowCloses emits one final count per window once stream time passes its end plus grace', () => {
    const builder = new StreamsBuilder();
    builder
      .stream('views', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(TimeWindows.ofSizeAndGrace(100, 20))
      .count()
      .suppress(Suppressed.untilWindowCloses())
      .toStream()
      .to('final-counts', Produced.with(WindowedSerdes.timeWindowedSerdeFrom(S, 100), L));
    const driver = new TopologyTestDriver(builder.build());
    try {
      const input = driver.createInputTopic('views', S, S);
      const out = driver.createOutputTopic('final-counts', WindowedSerdes.timeWindowedSerdeFrom(S, 100), L);
      for (const t of [1, 5, 50, 99, 105]) input.pipeInput('home', 'v', t);
      input.pipeInput('news', 'v', 110);
      assert.equal(out.getQueueSize(), 0, 'nothing before the window [0,100) closes at 120');
      input.pipeInput('news', 'v', 119);
      assert.equal(out.getQueueSize(), 0);
      input.pipeInput('news', 'v', 120);
      assert.deepEqual(
        out.readKeyValuesToList().map((kv) => `${kv.key!.key}@${kv.key!.window.start()}=${kv.value}`),
        ['home@0=4'],
      );
      input.pipeInput('other', 'v', 500);
      assert.deepEqual(
        out.readKeyValuesToList().map((kv) => `${kv.key!.key}@${kv.key!.window.start()}=${kv.value}`),
        ['home@100=1', 'news@100=3'],
      );
    } finally {
      driver.close();
    }
  });

  it('untilTimeLimit emits the latest value per key once it has waited the limit of stream time', () => {
    const builder = new StreamsBuilder();
    builder
      .stream('in', Consumed.with(S, L))
      .groupByKey()
      .reduce((a, b) => a + b, Materialized.with(S, L))
      .suppress(Suppressed.untilTimeLimit(10))
      .toStream()
      .to('out', Produced.with(S, L));
    const driver = new TopologyTestDriver(builder.build());
    try {
      const input = driver.createInputTopic('in', S, L);
      const out = driver.createOutputTopic('out', S, L);
      input.pipeInput('a', 1, 0);
      input.pipeInput('a', 2, 5);
      input.pipeInput('b', 7, 8);
      assert.equal(out.getQueueSize(), 0);
      input.pipeInput('c', 1, 10);
      assert.deepEqual(out.readKeyValuesToList(), [{ key: 'a', value: 3 }]);
    } finally {
      driver.close();
    }
  });
});

describe('stream-table joins', () => {
  function build(left: boolean) {
    const builder = new StreamsBuilder();
    const users = builder.table('users', Consumed.with(S, S), Materialized.as('users-store'));
    const views = builder.stream('views', Consumed.with(S, S));
    const joiner = (page: string, region: string | null) => `${page}/${region ?? 'unknown'}`;
    (left
      ? views.leftJoin(users, joiner, Joined.with(S, S, S))
      : views.join(users, joiner, Joined.with(S, S, S))
    ).to('enriched', Produced.with(S, S));
    return builder.build();
  }

  it('join enriches with the current table value and drops records without one; leftJoin keeps them', () => {
    for (const left of [false, true]) {
      const driver = new TopologyTestDriver(build(left));
      try {
        const users = driver.createInputTopic('users', S, S);
        const views = driver.createInputTopic('views', S, S);
        views.pipeInput('alice', 'home', 1);
        users.pipeInput('alice', 'eu', 2);
        views.pipeInput('alice', 'news', 3);
        users.pipeInput('alice', 'us', 4);
        views.pipeInput('alice', 'shop', 5);
        users.pipeInput('alice', null, 6);
        views.pipeInput('alice', 'exit', 7);
        const out = driver.createOutputTopic('enriched', S, S).readValuesToList();
        assert.deepEqual(
          out,
          left ? ['home/unknown', 'news/eu', 'shop/us', 'exit/unknown'] : ['news/eu', 'shop/us'],
        );
      } finally {
        driver.close();
      }
    }
  });

  it('the stream and the table share one sub-topology (one task per partition)', () => {
    const t = build(false);
    assert.equal(t.subtopologies().length, 1);
    assert.deepEqual(t.subtopologies()[0]!.sourceTopics.sort(), ['users', 'views']);
    assert.ok(t.describe().toString().includes('(stores: [users-store])'));
  });
});
