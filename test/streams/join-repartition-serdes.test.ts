// The repartition topics of a stream-stream join carry each side's own key serde, as Kafka's KStreamImpl.doJoin:
// repartitionForJoin takes the StreamJoined key serde, else that side's key serde, else the default one; never the
// other side's. Through a broker: a stream keyed in a tagged serde joins a re-keyed stream (its key serde unknown,
// so the default String) on either side; both repartition topics of the re-keyed stream must hold plain keys, and
// the joins still meet (the sides' keys deserialize to the same strings). The join's window stores and its result
// take the StreamJoined serdes alone: with none, the default ones (their changelogs' keys and the output's).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  JoinWindows,
  KafkaStreams,
  Produced,
  type Serde,
  Serdes,
  StreamJoined,
  StreamsBuilder,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();

/** A key serde unlike String's: `tag:` before the UTF-8 text, so its bytes betray which serde wrote a key. */
const TAGGED: Serde<string> = {
  serialize: (_topic, data) => (data === null ? null : Buffer.from(`tag:${data}`)),
  deserialize: (_topic, data) => (data === null ? null : data.toString('utf8').replace(/^tag:/, '')),
};

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
    const streams = new KafkaStreams(storeTopology().build(), {
      'application.id': app,
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[0]!,
      'commit.interval.ms': 100,
      'default.key.serde': Serdes.String(),
      'default.value.serde': Serdes.String(),
    });
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const stores = ['this', 'other'];
    const changelogs = stores.map(
      (n) => new TopicFollower(env.bootstrap, `${app}-j3-${n}-join-store-changelog`, 1),
    );
    const out = new TopicFollower(env.bootstrap, 'jr-out2', 1);
    try {
      await streams.start();
      for (const f of [...changelogs, out]) f.start();
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
      const read = () =>
        [
          // The window key: the key's bytes, then the 8-byte timestamp (its first bytes zero) and a sequence number.
          ...changelogs.map((f, i) => `${stores[i]}: ${f.records.map((r) => r.key.split('\u0000')[0])}`),
          `out: ${out.records.map((r) => `${r.key}=${r.value?.toString('utf8')}`)}`,
        ].join('; ');
      await waitUntil(
        () => out.records.length >= 1 && changelogs.every((f) => f.records.length > 0),
        60_000,
        read,
      );
      assert.equal(read(), 'this: A; other: A; out: A=a+b');
    } finally {
      for (const f of [...changelogs, out]) await f.stop();
      await streams.close();
      await producer.close();
    }
  });

  it('carry the key serde of their own side, not the other side one', async () => {
    const app = 'jr-app';
    const streams = new KafkaStreams(topology().build(), {
      'application.id': app,
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[0]!,
      'commit.interval.ms': 100,
      'default.key.serde': Serdes.String(),
      'default.value.serde': Serdes.String(),
    });
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const names = ['j1-right', 'j2-left'];
    const repartitions = names.map((n) => new TopicFollower(env.bootstrap, `${app}-${n}-repartition`, 1));
    const out = new TopicFollower(env.bootstrap, 'jr-out', 1);
    try {
      await streams.start();
      for (const f of [...repartitions, out]) f.start();
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
      const read = () =>
        [
          ...repartitions.map((f, i) => `${names[i]}: ${f.records.map((r) => r.key)}`),
          `out: ${out.records.map((r) => r.value?.toString('utf8')).sort()}`,
        ].join('; ');
      await waitUntil(() => out.records.length >= 2, 60_000, read);
      assert.equal(read(), 'j1-right: A; j2-left: A; out: A:r+t,t+A:r');
    } finally {
      for (const f of [...repartitions, out]) await f.stop();
      await streams.close();
      await producer.close();
    }
  });
});
