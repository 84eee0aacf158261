// Session windows and sliding windows in the test driver, against sequences worked out by hand from Kafka's
// rules: sessions grow and merge (with tombstones for the sessions merged away), late records are dropped after
// grace; sliding windows are the windows ending at each record and the ones just after them.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Consumed,
  Materialized,
  Produced,
  Serdes,
  SessionWindows,
  SlidingWindows,
  StreamsBuilder,
  TopologyTestDriver,
  WindowedSerdes,
} from '../../src/streams/index.js';

const S = Serdes.String();
const L = Serdes.Long();

describe('session windows', () => {
  it('count grows, merges and closes sessions as Kafka does', () => {
    const builder = new StreamsBuilder();
    builder
      .stream('clicks', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(SessionWindows.ofInactivityGapAndGrace(10, 15))
      .count(Materialized.as('sessions'))
      .toStream()
      .to('session-counts', Produced.with(WindowedSerdes.sessionWindowedSerdeFrom(S), L));
    const topology = builder.build();
    assert.ok(
      topology.describe().toString().includes('Processor: KSTREAM-AGGREGATE-0000000001 (stores: [sessions])'),
    );
    assert.deepEqual(topology.stores.get('sessions')!.logConfig, { 'cleanup.policy': 'compact,delete' });
    assert.equal(topology.stores.get('sessions')!.session?.retentionMs, 10 + 15);
    const driver = new TopologyTestDriver(topology);
    try {
      const input = driver.createInputTopic('clicks', S, S);
      for (const t of [0, 5, 30, 18, 20, 5]) input.pipeInput('a', 'x', t); // 18: within grace; the last 5: its session closed, dropped
      const out = driver
        .createOutputTopic('session-counts', WindowedSerdes.sessionWindowedSerdeFrom(S), L)
        .readRecordsToList()
        .map(
          (r) => `${r.key!.key}@${r.key!.window.start()}-${r.key!.window.end()}=${r.value}@${r.timestamp}`,
        );
      assert.deepEqual(out, [
        'a@0-0=1@0',
        'a@0-0=null@0',
        'a@0-5=2@5',
        'a@30-30=1@30',
        'a@18-18=1@18',
        'a@18-18=null@18',
        'a@30-30=null@30',
        'a@18-30=3@30',
      ]);
      // Retention is gap + grace = 25 ms, but a segment spans at least a minute: both sessions are kept, and
      // reads see only those ending after streamTime - retention (Kafka 3.4+, KAFKA-12960): 0-5 is not read.
      const store = driver.getSessionStore<string, number>('sessions')!;
      assert.deepEqual(
        store.fetch('a').map((s) => [s.startMs, s.endMs, s.value]),
        [[18, 30, 3]],
      );
    } finally {
      driver.close();
    }
  });

  it('aggregate merges session aggregates with the merger; reduce keeps the first value as the start', () => {
    const builder = new StreamsBuilder();
    const sessions = builder
      .stream('words', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(SessionWindows.ofInactivityGapAndGrace(10, 100));
    sessions
      .aggregate(
        () => '',
        (_k, v, agg) => agg + v,
        (_k, a, b) => a + b,
        Materialized.with(S, S),
      )
      .toStream()
      .to('joined', Produced.with(WindowedSerdes.sessionWindowedSerdeFrom(S), S));
    sessions
      .reduce((a, b) => `${a}|${b}`, Materialized.with(S, S))
      .toStream()
      .to('reduced', Produced.with(WindowedSerdes.sessionWindowedSerdeFrom(S), S));
    const driver = new TopologyTestDriver(builder.build());
    try {
      const input = driver.createInputTopic('words', S, S);
      input.pipeInput('k', 'a', 0);
      input.pipeInput('k', 'c', 40);
      input.pipeInput('k', 'b', 20); // within grace: a session of its own, 20 - 0 > 10 and 40 - 20 > 10
      input.pipeInput('k', 'd', 30); // bridges [20] and [40]
      const last = (topic: string) =>
        driver.createOutputTopic(topic, WindowedSerdes.sessionWindowedSerdeFrom(S), S).readKeyValuesToMap();
      const fmt = (m: Map<unknown, string>) =>
        [...m].map(([k, v]) => {
          const w = k as { key: string; window: { startMs: number; endMs: number } };
          return `${w.window.startMs}-${w.window.endMs}=${v}`;
        });
      // readKeyValuesToMap keys are objects, so every record is its own entry; keep the non-null ones in order.
      assert.deepEqual(fmt(last('joined')), ['0-0=a', '40-40=c', '20-20=b', '20-40=bcd']);
      assert.deepEqual(fmt(last('reduced')), ['0-0=a', '40-40=c', '20-20=b', '20-40=b|c|d']);
    } finally {
      driver.close();
    }
  });
});

describe('sliding windows', () => {
  it('counts in the window ending at each record and the one just after it', () => {
    const builder = new StreamsBuilder();
    builder
      .stream('events', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(SlidingWindows.ofTimeDifferenceWithNoGrace(10))
      .count(Materialized.as('sliding'))
      .toStream()
      .to('sliding-counts', Produced.with(WindowedSerdes.timeWindowedSerdeFrom(S, 10), L));
    const driver = new TopologyTestDriver(builder.build());
    try {
      const input = driver.createInputTopic('events', S, S);
      for (const t of [5, 8, 25, 3]) input.pipeInput('k', 'x', t); // 3: its windows closed, dropped
      const out = driver
        .createOutputTopic('sliding-counts', WindowedSerdes.timeWindowedSerdeFrom(S, 10), L)
        .readRecordsToList()
        .map((r) => `${r.key!.window.start()}-${r.key!.window.end()}=${r.value}@${r.timestamp}`);
      assert.deepEqual(out, ['0-10=1@5', '0-10=2@8', '6-16=1@8', '15-25=1@25']);
    } finally {
      driver.close();
    }
  });

  it('an out-of-order record within grace updates every window it falls in', () => {
    const builder = new StreamsBuilder();
    builder
      .stream('events', Consumed.with(S, L))
      .groupByKey()
      .windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(10, 50))
      .reduce((a, b) => a + b, Materialized.with(S, L))
      .toStream()
      .to('sums', Produced.with(WindowedSerdes.timeWindowedSerdeFrom(S, 10), L));
    const driver = new TopologyTestDriver(builder.build());
    try {
      const input = driver.createInputTopic('events', S, L);
      input.pipeInput('k', 1, 20);
      input.pipeInput('k', 2, 40);
      input.pipeInput('k', 4, 25); // out of order, within grace
      const out = driver
        .createOutputTopic('sums', WindowedSerdes.timeWindowedSerdeFrom(S, 10), L)
        .readRecordsToList()
        .map((r) => `${r.key!.window.start()}-${r.key!.window.end()}=${r.value}`);
      // 20: [10,20]=1. 40: [30,40]=2 and 20's right window [21,31] is empty (not made).
      // 25: [15,25]=1+4 (20 and 25); 20's right window [21,31] now holds 25: =4; 25's own right window
      // [26,36] is empty; 40's window [30,40] does not reach 25.
      assert.deepEqual(out, ['10-20=1', '30-40=2', '15-25=5', '21-31=4']);
    } finally {
      driver.close();
    }
  });
});
