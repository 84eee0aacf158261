// A source table gets a store only when it needs one, as Kafka's KTableSource: `builder.table(topic)` (and
// `toTable()`) without a store name the user chose, read by nothing below, is not materialized. Such an
// application creates no changelog topic and keeps no state, and its table forwards every record as it comes
// (no store, so no record cache). A table that a stream-table join reads is materialized under its generated
// name (`<topic>-STATE-STORE-<n>`), with its changelog.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  Produced,
  Serdes,
  StreamsBuilder,
  type Topology,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { type StreamsBroker, TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();

/** Runs `topology` as `appId` until `output` holds `expected` records; answers them and the app's topics. */
async function run(
  env: StreamsBroker,
  appId: string,
  topology: Topology,
  input: { topic: string; key: string; value: string }[],
  output: string,
  expected: number,
): Promise<{ results: string[]; internalTopics: string[] }> {
  const streams = new KafkaStreams(topology, {
    'application.id': appId,
    'bootstrap.servers': env.bootstrap,
    'state.dir': env.dirs[0]!,
    // Long enough that a record cache would hold the first update of k1 back and collapse it with the second.
    'commit.interval.ms': 5000,
  });
  const follower = new TopicFollower(env.bootstrap, output, 1);
  const producer = new Producer({ bootstrapServers: env.bootstrap });
  const admin = new Admin({ bootstrapServers: env.bootstrap });
  follower.start();
  try {
    await streams.start();
    for (const r of input)
      await producer.send({ topic: r.topic, key: Buffer.from(r.key), value: Buffer.from(r.value) });
    await waitUntil(
      () => follower.records.length >= expected,
      15_000,
      () => `${follower.records.length} of ${expected} results`,
    );
    const internalTopics = (await admin.listTopics()).filter((t) => t.startsWith(`${appId}-`)).sort();
    return { results: follower.records.map((r) => `${r.key}:${r.value?.toString()}`), internalTopics };
  } finally {
    await admin.close();
    await producer.close();
    await follower.stop();
    await streams.close();
  }
}

describe('source tables materialized only when needed', () => {
  const env = useStreamsBroker(
    { 'stm-prices': 1, 'stm-out': 1, 'stm-customers': 1, 'stm-orders': 1, 'stm-enriched': 1 },
    1,
  );

  it('a table only streamed on has no store, no changelog, and forwards every update', async () => {
    const builder = new StreamsBuilder();
    builder
      .table('stm-prices', Consumed.with(S, S))
      .mapValues((v) => v.toUpperCase())
      .toStream()
      .to('stm-out', Produced.with(S, S));
    const topology = builder.build();
    const input = [
      { topic: 'stm-prices', key: 'k1', value: 'a' },
      { topic: 'stm-prices', key: 'k1', value: 'b' },
      { topic: 'stm-prices', key: 'k2', value: 'c' },
    ];
    const { results, internalTopics } = await run(env, 'stm-plain', topology, input, 'stm-out', 3);
    assert.deepEqual(results, ['k1:A', 'k1:B', 'k2:C']);
    assert.deepEqual(internalTopics, []);
    assert.match(topology.describe().toString(), /Processor: KTABLE-SOURCE-0000000002 \(stores: \[\]\)/);
  });

  it('a table a stream-table join reads is materialized under its generated name', async () => {
    const builder = new StreamsBuilder();
    const customers = builder.table('stm-customers', Consumed.with(S, S));
    builder
      .stream('stm-orders', Consumed.with(S, S))
      .join(customers, (order, customer) => `${order}@${customer}`)
      .to('stm-enriched', Produced.with(S, S));
    const topology = builder.build();
    assert.match(
      topology.describe().toString(),
      /Processor: KTABLE-SOURCE-0000000002 \(stores: \[stm-customers-STATE-STORE-0000000000\]\)/,
    );
    const input = [
      { topic: 'stm-customers', key: 'c1', value: 'ann' },
      { topic: 'stm-orders', key: 'c1', value: 'o1' },
    ];
    const { results, internalTopics } = await run(env, 'stm-join', topology, input, 'stm-enriched', 1);
    assert.deepEqual(results, ['c1:o1@ann']);
    assert.deepEqual(internalTopics, ['stm-join-stm-customers-STATE-STORE-0000000000-changelog']);
  });
});
