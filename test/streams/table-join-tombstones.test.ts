// What a table-table inner join forwards when a change joins to nothing, as Kafka's KTableKTableInnerJoin: with
// the other side present it forwards the change even when both its new and old joined values are null (the
// parents send no old values unless an operation below asks), so `toStream()` writes a tombstone for a delete of a
// key the left table never held, and for a record a filter above it dropped. Without the other side it forwards
// nothing.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { Consumed, KafkaStreams, Produced, Serdes, StreamsBuilder } from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();

describe('table-table inner join of unnamed tables', () => {
  const env = useStreamsBroker({ 'ttj-left': 1, 'ttj-right': 1, 'ttj-out': 1 }, 1);

  it('forwards a change that joins to null both ways when the other side has a value', async () => {
    const builder = new StreamsBuilder();
    const right = builder.table('ttj-right', Consumed.with(S, S));
    builder
      .table('ttj-left', Consumed.with(S, S))
      .filter((_k, v) => v !== 'skip')
      .join(right, (l, r) => `${l}+${r}`)
      .toStream()
      .to('ttj-out', Produced.with(S, S));
    const streams = new KafkaStreams(builder.build(), {
      'application.id': 'ttj',
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[0]!,
      'statestore.cache.max.bytes': 0,
    });
    const follower = new TopicFollower(env.bootstrap, 'ttj-out', 1);
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const results = () => follower.records.map((r) => `${r.key}:${r.value?.toString() ?? 'null'}`);
    const send = (topic: string, key: string, value: string | null) =>
      producer.send({ topic, key: Buffer.from(key), value: value === null ? null : Buffer.from(value) });
    follower.start();
    try {
      await streams.start();
      await send('ttj-right', 'k1', 'r1');
      await send('ttj-right', 'k2', 'r2');
      await send('ttj-left', 'k1', 'a');
      await send('ttj-left', 'k2', 'skip'); // dropped by the filter, which knows no old value: a tombstone
      await send('ttj-left', 'k3', 'c'); // no right value: nothing
      await send('ttj-left', 'k4', null); // a delete of a key never held, k4 without a right value: nothing
      await send('ttj-right', 'k5', 'r5');
      await send('ttj-left', 'k5', null); // a delete of a key never held, with a right value: a tombstone
      await send('ttj-left', 'k1', 'b');
      await waitUntil(
        () => follower.records.length >= 4,
        30_000,
        () => results().join(' '),
      );
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(results(), ['k1:a+r1', 'k2:null', 'k5:null', 'k1:b+r1']);
    } finally {
      await producer.close();
      await follower.stop();
      await streams.close();
    }
  });
});
