// The repartition topics of a stream-stream join carry each side's own key serde, as Kafka's KStreamImpl.doJoin:
// repartitionForJoin takes the StreamJoined key serde, else that side's key serde, else the default one; never the
// other side's. Through a broker: a stream keyed in a tagged serde joins a re-keyed stream (its key serde unknown,
// so the default String) on either side; both repartition topics of the re-keyed stream must hold plain keys, and
// the joins still meet (the sides' keys deserialize to the same strings). The join's window stores and its result
// take the StreamJoined serdes alone: with none, the default ones (their changelogs' keys and the output's).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Consumed,
  JoinWindows,
  Produced,
  Serdes,
  StreamJoined,
  StreamsBuilder,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { rawRecord, readFollowed, runTopology, TAGGED } from './serdes-helpers.js';
import { useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();

function topology(): StreamsBuilder {
  const builder = new StreamsBuilder();
  const tagged = builder.stream('jr-tagged', Consumed.with(TAGGED, S));
  const rekeyed = builder.stream('jr-plain', Consumed.with(S, S)).selectKey((_k, v) => v.split(':')[0]!);
  const windows = JoinWindows.ofTimeDifferenceWithNoGrace(60_000);
  tagged
    .join(
      rekeyed,
      (t, r) => `${t}+${r}`,
      windows,
      StreamJoined.as<string, string, string>('j1').withName('j1'),
    )
    .to('jr-out', Produced.with(S, S));
  rekeyed
    .join(
      tagged,
      (r, t) => `${r}+${t}`,
      windows,
      StreamJoined.as<string, string, string>('j2').withName('j2'),
    )
    .to('jr-out', Produced.with(S, S));
  return builder;
}

/** Two streams keyed in the tagged serde, joined with a StreamJoined without serdes, the result written as is. */
function storeTopology(): StreamsBuilder {
  const builder = new StreamsBuilder();
  builder
    .stream('jr-a', Consumed.with(TAGGED, S))
    .join(
      builder.stream('jr-b', Consumed.with(TAGGED, S)),
      (a, b) => `${a}+${b}`,
      JoinWindows.ofTimeDifferenceWithNoGrace(60_000),
      StreamJoined.as<string, string, string>('j3'),
    )
    .to('jr-out2');
  return builder;
}

describe('stream-stream join repartition topics', () => {
  const env = useStreamsBroker(
    { 'jr-tagged': 1, 'jr-plain': 1, 'jr-out': 1, 'jr-a': 1, 'jr-b': 1, 'jr-out2': 1 },
    1,
  );

  // Kafka's KStreamImplJoin builds the window stores (StreamJoinedStoreFactory) and the result stream with the
  // StreamJoined serdes alone, so without them the default serdes, not the joined streams' ones.
  it('the join stores and the result take the StreamJoined serdes, else the default ones', async () => {
    const app = 'jr-stores';
    const topics = {
      this: [`${app}-j3-this-join-store-changelog`, 1],
      other: [`${app}-j3-other-join-store-changelog`, 1],
      out: ['jr-out2', 1],
    } as const;
    await runTopology(env, app, storeTopology(), topics, async ({ producer, followed }) => {
      const t = Date.now();
      await producer.send({
        topic: 'jr-a',
        key: Buffer.from('tag:A'),
        value: Buffer.from('a'),
        timestamp: t,
      });
      await producer.send({
        topic: 'jr-b',
        key: Buffer.from('tag:A'),
        value: Buffer.from('b'),
        timestamp: t,
      });
      // A window key: the key's bytes, then the 8-byte timestamp (its first bytes zero) and a sequence number.
      const read = () =>
        readFollowed(followed, (r) => (r.key.includes('\u0000') ? r.key.split('\u0000')[0]! : rawRecord(r)));
      await waitUntil(() => [...followed.values()].every((f) => f.records.length > 0), 60_000, read);
      assert.equal(read(), 'this: A; other: A; out: A=a+b');
    });
  });

  it('carry the key serde of their own side, not the other side one', async () => {
    const app = 'jr-app';
    const topics = {
      'j1-right': [`${app}-j1-right-repartition`, 1],
      'j2-left': [`${app}-j2-left-repartition`, 1],
      out: ['jr-out', 1],
    } as const;
    await runTopology(env, app, topology(), topics, async ({ producer, followed }) => {
      const t = Date.now();
      await producer.send({
        topic: 'jr-tagged',
        key: Buffer.from('tag:A'),
        value: Buffer.from('t'),
        timestamp: t,
      });
      await producer.send({
        topic: 'jr-plain',
        key: Buffer.from('x'),
        value: Buffer.from('A:r'),
        timestamp: t,
      });
      const out = followed.get('out')!;
      const read = () =>
        [
          ...['j1-right', 'j2-left'].map((n) => `${n}: ${followed.get(n)!.records.map((r) => r.key)}`),
          `out: ${out.records.map((r) => r.value?.toString('utf8')).sort()}`,
        ].join('; ');
      await waitUntil(() => out.records.length >= 2, 60_000, read);
      assert.equal(read(), 'j1-right: A; j2-left: A; out: A:r+t,t+A:r');
    });
  });
});
