// topology.optimization (Kafka's StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG): "none", "all", or a comma-separated
// list of reuse.ktable.source.topics, merge.repartition.topics and single.store.self.join, checked as Kafka's
// verifyTopologyOptimizationConfigs (an unknown value, or "none"/"all" in a list, is refused). Brook applies no
// optimization: an instance asked for some logs that it runs the topology as built, and a source KTable keeps its
// -changelog topic (README, "Where Brook Streams still differs").

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import {
  Consumed,
  KafkaStreams,
  Materialized,
  Serdes,
  StreamsBuilder,
  StreamsConfig,
  StreamsConfigError,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { useStreamsBroker } from './streams-helpers.js';

function tableTopology(builder = new StreamsBuilder()) {
  const S = Serdes.String();
  builder.table('opt-in', Consumed.with(S, S), Materialized.as('opt-table'));
  return builder;
}

describe('topology.optimization', () => {
  const env = useStreamsBroker({ 'opt-in': 1 }, 1);

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

  it('"all" is accepted with a log line that no optimization is applied', async () => {
    const props = {
      'application.id': 'opt-all',
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[0]!,
      [StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG]: StreamsConfig.OPTIMIZE,
    };
    const streams = new KafkaStreams(tableTopology().build(props), props);
    const logs: string[] = [];
    streams.setLogger((m) => logs.push(m));
    const admin = new Admin({ bootstrapServers: env.bootstrap });
    try {
      await streams.start();
      await waitUntil(
        () => streams.state() === 'RUNNING',
        30_000,
        () => `state ${streams.state()}`,
      );
      assert.ok(
        logs.some((m) =>
          m.startsWith(
            'topology.optimization asks for reuse.ktable.source.topics, merge.repartition.topics, ' +
              'single.store.self.join: Brook applies no topology optimization',
          ),
        ),
        logs.join('\n'),
      );
      // Kafka's reuse.ktable.source.topics would restore the table from opt-in; Brook keeps its changelog.
      assert.ok((await admin.listTopics()).includes('opt-all-opt-table-changelog'));
    } finally {
      await streams.close();
      await admin.close();
    }
  });
});
