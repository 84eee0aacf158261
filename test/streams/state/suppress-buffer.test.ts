// The suppress buffer's changelog (Kafka's version 3 format) and restoration, without a broker: the records a
// windowed count's suppression logs at each commit of the test driver (an entry while a window is held, a
// tombstone once it is emitted, one record per key per commit), the value bytes, and a buffer rebuilt from a
// changelog in order, with a re-put key keeping its place; the store names describe() prints.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Consumed,
  Serdes,
  StreamsBuilder,
  Suppressed,
  TimeWindows,
  TopologyTestDriver,
  WindowedSerdes,
} from '../../../src/streams/index.js';
import {
  type BufferedEntry,
  decodeBufferValue,
  encodeBufferValue,
  SuppressBuffer,
} from '../../../src/streams/state/suppress-buffer.js';

const S = Serdes.String();
const L = Serdes.Long();
const B = Serdes.ByteArray();
const long = (n: number) => L.serialize('', n)!;

function entry(
  key: string,
  timeMs: number,
  prior: number | null,
  old: number | null,
  next: number | null,
): BufferedEntry {
  return {
    keyBytes: Buffer.from(key),
    timeMs,
    prior: prior === null ? null : long(prior),
    old: old === null ? null : long(old),
    new: next === null ? null : long(next),
    context: { timestamp: 7, offset: 3, topic: 'in', partition: 0, headers: [{ key: 'h', value: null }] },
  };
}

describe('suppress buffer changelog', () => {
  it('writes Kafka version 3 values: context, prior, old (-2 when it is the prior), new, buffer time', () => {
    const e = entry('k', 100, 1, 1, 2);
    const bytes = encodeBufferValue(e);
    // timestamp, offset, topic "in", partition, 1 header ("h", null), prior 8, old -2, new 8, time
    assert.equal(bytes.length, 8 + 8 + 4 + 2 + 4 + 4 + (4 + 1 + 4) + (4 + 8) + 4 + (4 + 8) + 8);
    assert.equal(
      bytes.readInt32BE(8 + 8 + 4 + 2 + 4 + 4 + 9 + 12),
      -2,
      'old value written as the prior sentinel',
    );
    assert.equal(Number(bytes.readBigInt64BE(bytes.length - 8)), 100);
    assert.deepEqual(decodeBufferValue(Buffer.from('k'), bytes), e);
    const nulls = entry('k', 5, null, null, 4);
    assert.deepEqual(decodeBufferValue(Buffer.from('k'), encodeBufferValue(nulls)), nulls);
    assert.throws(
      () => decodeBufferValue(Buffer.from('k'), bytes.subarray(0, bytes.length - 1)),
      /truncated/,
    );
  });

  it('a windowed count logs one entry per held key and commit, and a tombstone once the window is emitted', () => {
    const builder = new StreamsBuilder();
    builder
      .stream('views', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(TimeWindows.ofSizeAndGrace(100, 20))
      .count()
      .suppress(Suppressed.untilWindowCloses())
      .toStream()
      .to('final');
    const driver = new TopologyTestDriver(builder.build(), { 'application.id': 'sup' });
    try {
      const input = driver.createInputTopic('views', S, S);
      const changelog = driver.createOutputTopic(
        'sup-KTABLE-SUPPRESS-STATE-STORE-0000000004-changelog',
        WindowedSerdes.timeWindowedSerdeFrom(S, 100),
        B,
      );
      input.pipeInput('a', 'v', 1);
      input.pipeInput('a', 'v', 5);
      const held = changelog.readRecordsToList();
      assert.equal(held.length, 2, 'one record per commit of the held key');
      for (const r of held) assert.deepEqual(r.headers, [{ key: 'v', value: Buffer.from([3]) }]);
      const last = decodeBufferValue(Buffer.alloc(0), held[1]!.value as Buffer);
      assert.equal(last.timeMs, 100, 'buffer time: the window end');
      assert.deepEqual([last.prior, last.old, last.new], [null, long(1), long(2)]);
      assert.equal(held[1]!.key!.key, 'a');
      input.pipeInput('b', 'v', 120); // stream time 120 = end 100 + grace 20: [0,100) closes
      const next = changelog.readRecordsToList();
      assert.deepEqual(
        next
          .map((r) => `${r.key!.key}@${r.key!.window.startMs}:${r.value === null ? 'tombstone' : 'entry'}`)
          .sort(),
        ['a@0:tombstone', 'b@100:entry'],
      );
    } finally {
      driver.close();
    }
  });

  it("describe() names the suppression's store as Kafka does (generated, or <Suppressed name>-store)", () => {
    const describe = (suppressed: Suppressed) => {
      const builder = new StreamsBuilder();
      builder
        .stream('views', Consumed.with(S, S))
        .groupByKey()
        .windowedBy(TimeWindows.ofSizeAndGrace(100, 20))
        .count()
        .suppress(suppressed)
        .toStream()
        .to('final');
      return builder.build().describe().toString();
    };
    assert.match(
      describe(Suppressed.untilWindowCloses()),
      /Processor: KTABLE-SUPPRESS-0000000003 \(stores: \[KTABLE-SUPPRESS-STATE-STORE-0000000004\]\)\n {6}--> KTABLE-TOSTREAM-0000000005/,
    );
    assert.match(
      describe(Suppressed.untilWindowCloses().withName('final-counts')),
      /Processor: final-counts \(stores: \[final-counts-store\]\)\n {6}--> KTABLE-TOSTREAM-0000000003/,
    );
  });

  it('restores in changelog order: tombstones remove, a re-put key keeps its place, nothing is dirty', () => {
    const logged: string[] = [];
    const buffer = new SuppressBuffer('s', B, L, 't', (k) => logged.push(k.toString()));
    const target = buffer.restoreTarget();
    target.put(Buffer.from('x'), encodeBufferValue(entry('x', 50, null, null, 1)));
    target.put(Buffer.from('y'), encodeBufferValue(entry('y', 10, null, null, 1)));
    target.put(Buffer.from('z'), encodeBufferValue(entry('z', 30, null, null, 1)));
    target.put(Buffer.from('x'), encodeBufferValue(entry('x', 5, null, 1, 2)));
    target.put(Buffer.from('z'), null);
    assert.equal(buffer.size, 2);
    buffer.logDirty();
    assert.deepEqual(logged, [], 'restoration marks nothing dirty');
    const emitted: string[] = [];
    buffer.evictUpTo(100, (key, value) => emitted.push(`${(key as Buffer).toString()}=${value}`));
    assert.deepEqual(emitted, ['y=1', 'x=2'], 'x kept buffer time 50, so y (10) leaves first');
    buffer.logDirty();
    assert.deepEqual(logged.sort(), ['x', 'y'], 'the evicted keys are tombstoned at the next commit');
  });
});
