// suppress(untilWindowCloses) over session windows, as Kafka: a session closes once stream time passes its end
// plus the grace period plus the inactivity gap (a record within the gap could still extend it), and the final
// results carry no tombstones (the sessions merged away). Before, a session went out at end + grace (a count of
// 2 for a session that then grew to 3) and each merged-away session went out as a null.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Consumed,
  KeyValue,
  Materialized,
  Produced,
  Serdes,
  SessionWindows,
  StreamsBuilder,
  Suppressed,
  TopologyTestDriver,
} from '../../src/streams/index.js';

const S = Serdes.String();
const L = Serdes.Long();

describe('suppress(untilWindowCloses) over session windows', () => {
  it('waits grace plus the inactivity gap and drops merged-away sessions', () => {
    const builder = new StreamsBuilder();
    builder
      .stream('clicks', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(10))
      .count(Materialized.with(S, L))
      .suppress(Suppressed.untilWindowCloses())
      .toStream()
      .map((w, n) => KeyValue.pair(`${w.key}@${w.window.startMs}-${w.window.endMs}`, n))
      .to('sessions', Produced.with(S, L));
    const driver = new TopologyTestDriver(builder.build(), { 'statestore.cache.max.bytes': 0 });
    try {
      const input = driver.createInputTopic('clicks', S, S);
      const out = driver.createOutputTopic('sessions', S, L);
      const read = () => out.readKeyValuesToList().map((kv) => `${kv.key}=${kv.value}`);
      input.pipeInput('a', 'x', 0); // a [0,0] = 1
      input.pipeInput('a', 'x', 8); // merged: a [0,8] = 2, a [0,0] retracted
      input.pipeInput('b', 'x', 15); // stream time 15: a [0,8] may still grow until 18
      assert.deepEqual(read(), [], 'nothing is final yet; the retraction of a [0,0] is not sent');
      input.pipeInput('a', 'x', 17); // merged: a [0,17] = 3
      input.pipeInput('z', 'x', 40); // stream time 40: sessions ending by 30 are final
      assert.deepEqual(read(), ['b@15-15=1', 'a@0-17=3']);
    } finally {
      driver.close();
    }
  });
});
