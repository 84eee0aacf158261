// KStream.repartition()'s topic is written and read with the Repartitioned key serde, the default one when it has
// none, not the stream's: Kafka's KStreamImpl.doRepartition hands the Repartitioned key serde alone to the
// repartition node, while the value serde and the serdes of the stream it returns fall back to the stream's.
// Through a broker: a stream keyed in a tagged serde with JSON values, repartitioned by name only, then written
// without Produced: the repartition topic holds the plain key and the JSON value, the output the tagged key.
// merge() drops both serdes (Kafka's KStreamImpl.merge: neither stream's can stand for both), so a merged stream
// written without Produced goes out in the default serdes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  Repartitioned,
  type Serde,
  Serdes,
  StreamsBuilder,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { TopicFollower, useStreamsBroker } from './streams-helpers.js';

/** A key serde unlike String's: `tag:` before the UTF-8 text, so its bytes betray which serde wrote a key. */
const TAGGED: Serde<string> = {
  serialize: (_topic, data) => (data === null ? null : Buffer.from(`tag:${data}`)),
  deserialize: (_topic, data) => (data === null ? null : data.toString('utf8').replace(/^tag:/, '')),
};

describe('serdes of a repartitioned or merged stream', () => {
  const env = useStreamsBroker({ 'rp-in': 1, 'rp-out': 1, 'mg-a': 1, 'mg-b': 1, 'mg-out': 1 }, 1);

  it('a merged stream has no serdes: written without Produced, it goes out in the default ones', async () => {
    const builder = new StreamsBuilder();
    const consumed = Consumed.with(TAGGED, Serdes.JSON<string>());
    builder.stream('mg-a', consumed).merge(builder.stream('mg-b', consumed)).to('mg-out');
    const streams = new KafkaStreams(builder.build(), {
      'application.id': 'mg-app',
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[0]!,
      'commit.interval.ms': 100,
      'default.key.serde': Serdes.String(),
      'default.value.serde': Serdes.String(),
    });
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const out = new TopicFollower(env.bootstrap, 'mg-out', 1);
    try {
      await streams.start();
      out.start();
      await producer.send({ topic: 'mg-a', key: Buffer.from('tag:A'), value: Buffer.from('"a"') });
      await producer.send({ topic: 'mg-b', key: Buffer.from('tag:B'), value: Buffer.from('"b"') });
      const read = () => `out: ${out.records.map((r) => `${r.key}=${r.value}`).sort()}`;
      await waitUntil(() => out.records.length >= 2, 60_000, read);
      assert.equal(read(), 'out: A=a,B=b');
    } finally {
      await out.stop();
      await streams.close();
      await producer.close();
    }
  });

  it('the topic takes the Repartitioned key serde, else the default one; the stream keeps its own', async () => {
    const builder = new StreamsBuilder();
    builder
      .stream('rp-in', Consumed.with(TAGGED, Serdes.JSON<string>()))
      .repartition(Repartitioned.as('rp'))
      .to('rp-out');
    const app = 'rp-app';
    const streams = new KafkaStreams(builder.build(), {
      'application.id': app,
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[0]!,
      'commit.interval.ms': 100,
      'default.key.serde': Serdes.String(),
      'default.value.serde': Serdes.String(),
    });
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const topics = [`${app}-rp-repartition`, 'rp-out'];
    const followers = topics.map((topic) => new TopicFollower(env.bootstrap, topic, 1));
    try {
      await streams.start();
      for (const f of followers) f.start();
      await producer.send({ topic: 'rp-in', key: Buffer.from('tag:A'), value: Buffer.from('"v"') });
      const read = () =>
        followers
          .map((f, i) => `${i === 0 ? 'repartition' : 'out'}: ${f.records.map((r) => `${r.key}=${r.value}`)}`)
          .join('; ');
      await waitUntil(() => followers.every((f) => f.records.length > 0), 60_000, read);
      assert.equal(read(), 'repartition: A="v"; out: tag:A="v"');
    } finally {
      for (const f of followers) await f.stop();
      await streams.close();
      await producer.close();
    }
  });
});
