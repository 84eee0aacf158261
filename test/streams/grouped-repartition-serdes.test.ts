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
import {
  Consumed,
  Grouped,
  KeyValue,
  Materialized,
  Produced,
  Serdes,
  SessionWindows,
  StreamsBuilder,
  TimeWindows,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { readFollowed, runTopology, TAGGED } from './serdes-helpers.js';
import { useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const L = Serdes.Long();

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
    const topics = Object.fromEntries(
      ['gk', 'gb', 'plain', 'selected'].map((n) => [n, [`${app}-${n}-repartition`, 1] as const]),
    );
    await runTopology(env, app, defaultsTopology(), topics, async ({ producer, followed }) => {
      await producer.send({
        topic: 'rs-json',
        partition: 0,
        key: Buffer.from('k'),
        value: Buffer.from('"A:0"'),
      });
      const read = () => readFollowed(followed);
      await waitUntil(() => [...followed.values()].every((f) => f.records.length > 0), 60_000, read);
      assert.equal(read(), 'gk: A=A:0; gb: A=A:0; plain: A="A:0"; selected: A="A:0"');
    });
  });

  it('carry the Grouped key serde, not the Materialized one', async () => {
    const app = 'rs-app';
    const stores = ['counts', 'wcounts', 'scounts', 'tcounts'];
    const topics = {
      ...Object.fromEntries(stores.map((s) => [s, [`${app}-${s}-repartition`, 2] as const])),
      'rs-counts': ['rs-counts', 1],
      'rs-regions': ['rs-regions', 1],
    } as const;
    await runTopology(env, app, topology(), topics, async ({ producer, followed }) => {
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
      const counts = followed.get('rs-counts')!.latest;
      const regions = followed.get('rs-regions')!.latest;
      const keys = (store: string) => [...new Set(followed.get(store)!.records.map((r) => r.key))].sort();
      const read = () =>
        [
          ...stores.map((s) => `${s}: ${keys(s)}`),
          `A ${counts.get('A')?.readBigInt64BE(0)}, B ${counts.get('B')?.readBigInt64BE(0)}`,
          `south ${regions.get('south')?.readBigInt64BE(0)}, north ${regions.get('north')?.readBigInt64BE(0)}`,
        ].join('; ');
      const expected =
        'counts: A,B; wcounts: A,B; scounts: A,B; tcounts: north,south; A 2, B 2; south 3, north 1';
      await waitUntil(() => read() === expected, 60_000, read);
    });
  });
});
