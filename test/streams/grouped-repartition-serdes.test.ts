// A grouping's repartition topic is written and read with the Grouped serdes, and its store with the Materialized
// ones, as Kafka's GroupedStreamAggregateBuilder (the repartition node takes the grouped key and value serdes) and
// KGroupedTableImpl (its GroupedTableOperationRepartitionNode likewise). Through a broker: groupings with
// Grouped.with(plain, ...) aggregated with a Materialized whose key serde differs (a tagged one) must leave the
// plain encoding in every repartition topic (a plain, a windowed and a session count of a stream, and a count of a
// regrouped table), while the counts still come out right. A Grouped without serdes (Grouped.as(name)) means the
// default serdes, not the stream's (Kafka's KStreamImpl.groupByKey / groupBy build the KGroupedStreamImpl from the
// GroupedInternal alone); only groupByKey() and groupBy(selector) without a Grouped keep the stream's.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  Grouped,
  KafkaStreams,
  KeyValue,
  Materialized,
  Produced,
  type Serde,
  Serdes,
  SessionWindows,
  StreamsBuilder,
  TimeWindows,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const L = Serdes.Long();

/** A key serde unlike String's: `tag:` before the UTF-8 text, so its bytes betray which serde wrote a key. */
const TAGGED: Serde<string> = {
  serialize: (_topic, data) => (data === null ? null : Buffer.from(`tag:${data}`)),
  deserialize: (_topic, data) => (data === null ? null : data.toString('utf8').replace(/^tag:/, '')),
};

/** The stream's value serde: JSON text, so `"A:0"` with its quotes where the default String serde writes `A:0`. */
const JSON_TEXT = Serdes.JSON<string>();

function defaultsTopology(): StreamsBuilder {
  const builder = new StreamsBuilder();
  const words = builder.stream('rs-json', Consumed.with(S, JSON_TEXT)).selectKey((_k, v) => v.split(':')[0]!);
  words.groupByKey(Grouped.as('gk')).count();
  words.groupBy((_k, v) => v.split(':')[0]!, Grouped.as('gb')).count();
  words.groupByKey().count(Materialized.as('plain'));
  words.groupBy((_k, v) => v.split(':')[0]!).count(Materialized.as('selected'));
  return builder;
}

function topology(): StreamsBuilder {
  const builder = new StreamsBuilder();
  const words = builder.stream('rs-in', Consumed.with(S, S)).selectKey((_k, v) => v.split(':')[0]!);
  words
    .groupByKey(Grouped.with(S, S))
    .count(Materialized.as<string, number>('counts').withKeySerde(TAGGED))
    .toStream()
    .to('rs-counts', Produced.with(S, L));
  words
    .groupByKey(Grouped.with(S, S))
    .windowedBy(TimeWindows.ofSizeWithNoGrace(60_000))
    .count(Materialized.as<string, number>('wcounts').withKeySerde(TAGGED));
  words
    .groupByKey(Grouped.with(S, S))
    .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(60_000))
    .count(Materialized.as<string, number>('scounts').withKeySerde(TAGGED));
  builder
    .table('rs-users', Consumed.with(S, S))
    .groupBy((user, region) => KeyValue.pair(region, user), Grouped.with(S, S))
    .count(Materialized.as<string, number>('tcounts').withKeySerde(TAGGED))
    .toStream()
    .to('rs-regions', Produced.with(S, L));
  return builder;
}

describe('repartition topics of groupings', () => {
  const env = useStreamsBroker(
    { 'rs-in': 2, 'rs-counts': 1, 'rs-users': 2, 'rs-regions': 1, 'rs-json': 1 },
    1,
  );

  it('of a Grouped without serdes carry the default serdes, without a Grouped the stream ones', async () => {
    const app = 'rs-defaults';
    const streams = new KafkaStreams(defaultsTopology().build(), {
      'application.id': app,
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[0]!,
      'commit.interval.ms': 100,
      'default.key.serde': Serdes.String(),
      'default.value.serde': Serdes.String(),
    });
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const names = ['gk', 'gb', 'plain', 'selected'];
    const repartitions = names.map((n) => new TopicFollower(env.bootstrap, `${app}-${n}-repartition`, 1));
    try {
      await streams.start();
      for (const f of repartitions) f.start();
      await producer.send({
        topic: 'rs-json',
        partition: 0,
        key: Buffer.from('k'),
        value: Buffer.from('"A:0"'),
      });
      const read = () =>
        repartitions
          .map((f, i) => `${names[i]}: ${f.records.map((r) => `${r.key}=${r.value?.toString('utf8')}`)}`)
          .join('; ');
      await waitUntil(() => repartitions.every((f) => f.records.length > 0), 60_000, read);
      assert.equal(read(), 'gk: A=A:0; gb: A=A:0; plain: A="A:0"; selected: A="A:0"');
    } finally {
      for (const f of repartitions) await f.stop();
      await streams.close();
      await producer.close();
    }
  });

  it('carry the Grouped key serde, not the Materialized one', async () => {
    const app = 'rs-app';
    const streams = new KafkaStreams(topology().build(), {
      'application.id': app,
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[0]!,
      'commit.interval.ms': 100,
    });
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const stores = ['counts', 'wcounts', 'scounts', 'tcounts'];
    const repartitions = stores.map((s) => new TopicFollower(env.bootstrap, `${app}-${s}-repartition`, 2));
    const counts = new TopicFollower(env.bootstrap, 'rs-counts', 1);
    const regions = new TopicFollower(env.bootstrap, 'rs-regions', 1);
    try {
      await streams.start();
      for (const f of [...repartitions, counts, regions]) f.start();
      for (let i = 0; i < 4; i++) {
        const value = Buffer.from(`${i % 2 === 0 ? 'A' : 'B'}:${i}`);
        await producer.send({ topic: 'rs-in', partition: i % 2, key: Buffer.from(`k${i}`), value });
        const region = Buffer.from(i === 3 ? 'north' : 'south');
        await producer.send({
          topic: 'rs-users',
          partition: i % 2,
          key: Buffer.from(`u${i}`),
          value: region,
        });
      }
      const read = () =>
        [
          ...repartitions.map((f, i) => `${stores[i]}: ${[...new Set(f.records.map((r) => r.key))].sort()}`),
          `A ${counts.latest.get('A')?.readBigInt64BE(0)}, B ${counts.latest.get('B')?.readBigInt64BE(0)}`,
          `south ${regions.latest.get('south')?.readBigInt64BE(0)}, north ${regions.latest.get('north')?.readBigInt64BE(0)}`,
        ].join('; ');
      const expected =
        'counts: A,B; wcounts: A,B; scounts: A,B; tcounts: north,south; A 2, B 2; south 3, north 1';
      await waitUntil(() => read() === expected, 60_000, read);
    } finally {
      for (const f of [...repartitions, counts, regions]) await f.stop();
      await streams.close();
      await producer.close();
    }
  });
});
