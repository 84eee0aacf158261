// topology.optimization (Kafka's StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG): "none", "all", or a comma-separated
// list of reuse.ktable.source.topics, merge.repartition.topics and single.store.self.join, checked as Kafka's
// verifyTopologyOptimizationConfigs (an unknown value, or "none"/"all" in a list, is refused). StreamsBuilder's
// build(props) applies reuse.ktable.source.topics as Kafka's: a source KTable's store has no -changelog topic and
// is restored from its source topic up to the group's committed offset; merge.repartition.topics is applied too
// (merge-repartition-topics.test.ts), and single.store.self.join (self-join.test.ts).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  Materialized,
  QueryableStoreTypes,
  Serdes,
  StoreQueryParameters,
  StreamsBuilder,
  StreamsConfig,
  StreamsConfigError,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { leavingGroup, useStreamsBroker } from './streams-helpers.js';

function tableTopology(builder = new StreamsBuilder()) {
  const S = Serdes.String();
  builder.table('opt-in', Consumed.with(S, S), Materialized.as('opt-table'));
  return builder;
}

describe('topology.optimization', () => {
  const env = useStreamsBroker({ 'opt-in': 1 }, 2);

  it('refuses values Kafka refuses, in KafkaStreams and in StreamsBuilder.build(props)', () => {
    const base = { 'application.id': 'opt-bad', 'bootstrap.servers': env.bootstrap };
    for (const value of [
      'everything',
      'all,none',
      'all, reuse.ktable.source.topics',
      'merge.repartition.topic',
    ]) {
      const props = { ...base, 'topology.optimization': value };
      assert.throws(
        () => new KafkaStreams(tableTopology().build(), props),
        (e: unknown) =>
          e instanceof StreamsConfigError &&
          e.message.startsWith(`Invalid value ${value} for configuration topology.optimization`),
        value,
      );
      assert.throws(() => tableTopology().build(props), StreamsConfigError, value);
    }
    for (const value of ['none', 'all', 'reuse.ktable.source.topics, merge.repartition.topics'])
      assert.ok(tableTopology().build({ ...base, 'topology.optimization': value }), value);
  });

  it('"all" is accepted, and no optimization is logged as left out', async () => {
    const props = {
      'application.id': 'opt-all',
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[0]!,
      [StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG]: StreamsConfig.OPTIMIZE,
    };
    const streams = new KafkaStreams(tableTopology().build(props), props);
    const logs: string[] = [];
    streams.setLogger((m) => logs.push(m));
    try {
      await streams.start();
      await waitUntil(
        () => streams.state() === 'RUNNING',
        30_000,
        () => `state ${streams.state()}`,
      );
      assert.ok(!logs.some((m) => m.startsWith('topology.optimization asks for')), logs.join('\n'));
    } finally {
      await streams.close();
    }
  });

  it("a topology built without the properties is not optimized, as Kafka's build()", async () => {
    const props = {
      'application.id': 'opt-unbuilt',
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[0]!,
      [StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG]: StreamsConfig.OPTIMIZE,
    };
    const streams = new KafkaStreams(tableTopology().build(), props);
    const admin = new Admin({ bootstrapServers: env.bootstrap });
    try {
      await streams.start();
      await waitUntil(
        () => streams.state() === 'RUNNING',
        30_000,
        () => `state ${streams.state()}`,
      );
      assert.ok((await admin.listTopics()).includes('opt-unbuilt-opt-table-changelog'));
    } finally {
      await streams.close();
      await admin.close();
    }
  });

  it('reuse.ktable.source.topics: no changelog, the table restored from its topic to the commit', async () => {
    const app = 'opt-reuse';
    const propsIn = (dir: string) => ({
      'application.id': app,
      'bootstrap.servers': env.bootstrap,
      'state.dir': dir,
      'commit.interval.ms': 100,
      [StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG]: StreamsConfig.REUSE_KTABLE_SOURCE_TOPICS,
    });
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const admin = new Admin({ bootstrapServers: env.bootstrap });
    const send = (key: string, value: string) =>
      producer.send({ topic: 'opt-in', key: Buffer.from(key), value: Buffer.from(value) });
    const table = (streams: KafkaStreams) =>
      streams.store(
        StoreQueryParameters.fromNameAndType(
          'opt-table',
          QueryableStoreTypes.keyValueStore<string, string>(),
        ),
      );
    /** Starts an instance on `dir`, noting its restorations, until the table holds `key` = `value`. */
    const run = async (dir: string, key: string, value: string) => {
      const props = propsIn(dir);
      const streams = new KafkaStreams(tableTopology().build(props), props);
      const restoring: string[] = [];
      streams.setGlobalStateRestoreListener({
        onRestoreStart: (tp, store, from, end) =>
          restoring.push(`start ${tp.topic}-${tp.partition} ${store} ${from}-${end}`),
        onBatchRestored: () => {},
        onRestoreEnd: (tp, store, total) =>
          restoring.push(`end ${tp.topic}-${tp.partition} ${store} ${total}`),
      });
      const logs: string[] = [];
      streams.setLogger((m) => logs.push(m));
      try {
        await streams.start();
        await waitUntil(
          () => streams.state() === 'RUNNING' && table(streams).get(key) === value,
          30_000,
          () => `state ${streams.state()}, ${restoring.join(', ')}\n${logs.join('\n')}`,
        );
      } catch (e) {
        await streams.close();
        throw e;
      }
      return { streams, restoring };
    };
    try {
      for (let i = 0; i < 5; i++) await send(`k${i}`, `v${i}`);
      const first = await run(env.dirs[0]!, 'k4', 'v4');
      await first.streams.close(leavingGroup());
      assert.deepEqual(first.restoring, []);
      // No changelog topic: the table's store is restored from opt-in itself.
      assert.deepEqual(
        (await admin.listTopics()).filter((t) => t.startsWith(`${app}-`)),
        [],
      );
      // While no instance runs: an update of k0 and a new key, past the group's committed offset 5.
      await send('k0', 'w0');
      await send('k5', 'v5');
      // An empty state directory: the store is restored from offset 0 up to the committed offset (not the
      // topic's end), and the two records after it are processed.
      const second = await run(env.dirs[1]!, 'k5', 'v5');
      try {
        assert.deepEqual(second.restoring, ['start opt-in-0 opt-table 0-5', 'end opt-in-0 opt-table 5']);
        const kv = table(second.streams);
        assert.deepEqual(
          ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'].map((k) => kv.get(k)),
          ['w0', 'v1', 'v2', 'v3', 'v4', 'v5'],
        );
      } finally {
        await second.streams.close(leavingGroup());
      }
      // The first state directory's checkpoint holds the source offset it had processed (4): a restart there
      // restores only what the second instance processed after it, up to its committed offset 7.
      const third = await run(env.dirs[0]!, 'k5', 'v5');
      try {
        assert.deepEqual(third.restoring, ['start opt-in-0 opt-table 5-7', 'end opt-in-0 opt-table 2']);
        assert.equal(table(third.streams).get('k0'), 'w0');
      } finally {
        await third.streams.close(leavingGroup());
      }
    } finally {
      await producer.close();
      await admin.close();
    }
  });
});
