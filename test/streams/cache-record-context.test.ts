// A cached write keeps its record context (Kafka's LRUCacheEntry): what a record cache forwards when it flushes
// reads the topic, partition and offset of the input record that produced it, not none. Seen downstream by a
// processor's recordMetadata(), and by suppress(), whose buffered entries (and their size, as Kafka counts it)
// include the topic. Both fail without the context (metadata null; 135 instead of 150 bytes).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BufferConfig,
  Consumed,
  KeyValue,
  Materialized,
  Produced,
  Serdes,
  StreamsBuilder,
  Suppressed,
  TimeWindows,
  TopologyTestDriver,
} from '../../src/streams/index.js';
import type { RecordMetadata } from '../../src/streams/processor.js';

const S = Serdes.String();
const L = Serdes.Long();

describe('record context of cached writes', () => {
  it("a flushed count carries its input record's topic, partition and offset", () => {
    const seen: string[] = [];
    const builder = new StreamsBuilder();
    builder
      .stream('clicks', Consumed.with(S, S))
      .groupByKey()
      .count(Materialized.as('click-counts'))
      .toStream()
      .process(() => {
        let ctx: { recordMetadata(): RecordMetadata | null };
        return {
          init(c) {
            ctx = c;
          },
          process(r) {
            const m = ctx.recordMetadata();
            seen.push(
              `${r.key}=${r.value} from ${m === null ? 'none' : `${m.topic}-${m.partition}@${m.offset}`}`,
            );
          },
        };
      });
    const driver = new TopologyTestDriver(builder.build());
    try {
      const input = driver.createInputTopic('clicks', S, S);
      input.pipeInput('a', 'x', 1);
      input.pipeInput('b', 'x', 2);
      input.pipeInput('a', 'x', 3);
      assert.deepEqual(seen, ['a=1 from clicks-0@0', 'b=1 from clicks-0@1', 'a=2 from clicks-0@2']);
    } finally {
      driver.close();
    }
  });

  it("suppress after a cached windowed count counts the record context's topic in its buffer size", () => {
    const builder = new StreamsBuilder();
    builder
      .stream('views', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(TimeWindows.ofSizeAndGrace(100, 0))
      .count()
      .suppress(
        Suppressed.untilWindowCloses(BufferConfig.maxRecords(2).shutDownWhenFull()).withName('bounded'),
      )
      .toStream()
      .map((w, n) => KeyValue.pair(`${w.key}@${w.window.startMs}`, n))
      .to('final', Produced.with(S, L));
    const driver = new TopologyTestDriver(builder.build());
    try {
      const input = driver.createInputTopic('views', S, S);
      input.pipeInput('a', 'v', 1);
      input.pipeInput('b', 'v', 2);
      // Each entry: 8 + key (1 + 8) + new (8) + context 8 + 8 + 5 ("views") + 4 = 50.
      assert.throws(
        () => input.pipeInput('c', 'v', 3),
        (e: Error) =>
          (e.cause as Error).message ===
          'bounded buffer exceeded its max capacity. Currently [3/2] records and [150/9223372036854775807] bytes.',
      );
    } finally {
      driver.close();
    }
  });
});
