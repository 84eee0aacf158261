// A record whose processing throws leaves no record context behind (Kafka's StreamTask.process resets its
// context in a finally): a punctuation that runs next reads its own context (topic null, partition -1, offset
// -1, as Kafka's StreamTask.punctuate sets it), not the failed record's.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Consumed, Serdes, StreamsBuilder, TopologyTestDriver } from '../../src/streams/index.js';
import type { RecordMetadata } from '../../src/streams/processor.js';

const S = Serdes.String();
/** What recordMetadata() answers in a punctuation. */
const P = 'null--1@-1';

test("a punctuation after a record that threw sees the punctuation's record metadata, as before any record", () => {
  const seen: string[] = [];
  const builder = new StreamsBuilder();
  builder
    .stream('orders', Consumed.with(S, S))
    .mapValues((v) => v)
    .process(() => {
      let ctx: { recordMetadata(): RecordMetadata | null };
      return {
        init(c) {
          ctx = c;
          c.schedule(1000, 'WALL_CLOCK_TIME', () => {
            const m = ctx.recordMetadata();
            seen.push(m === null ? 'none' : `${m.topic}-${m.partition}@${m.offset}`);
          });
        },
        process(r) {
          if (r.value === 'boom') throw new Error('processor failed on purpose');
        },
      };
    });
  const driver = new TopologyTestDriver(builder.build());
  try {
    const input = driver.createInputTopic('orders', S, S);
    input.pipeInput('a', 'ok', 1);
    driver.advanceWallClockTime(1000);
    assert.throws(
      () => input.pipeInput('b', 'boom', 2),
      (e: Error) => (e.cause as Error).message === 'processor failed on purpose',
    );
    driver.advanceWallClockTime(1000);
    assert.deepEqual(seen, [P, P], 'the failed record (orders-0@1) is not the punctuation context');
    // The task goes on: the next record is processed and the punctuation after it still sees none.
    input.pipeInput('c', 'ok', 3);
    driver.advanceWallClockTime(1000);
    assert.deepEqual(seen, [P, P, P]);
  } finally {
    driver.close();
  }
});
