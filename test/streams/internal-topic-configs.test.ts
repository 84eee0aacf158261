// The configs of the internal topics an application creates, with StreamsConfig's `topic.` prefix (Kafka's
// StreamsConfig.topicPrefix): every `topic.<name>` property goes to every repartition and changelog topic,
// over the library's defaults (retention.ms -1 and segment.bytes 50 MiB of repartition topics) and under a
// store's own log config; a window store's changelog keeps its retention (the store's plus
// windowstore.changelog.additional.retention.ms) unless the store's own log config names retention.ms.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import {
  Consumed,
  Grouped,
  KafkaStreams,
  Materialized,
  Serdes,
  StreamsBuilder,
  TimeWindows,
} from '../../src/streams/index.js';
import { useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const WINDOW_MS = 60_000;

function topology() {
  const builder = new StreamsBuilder();
  const input = builder.stream('in', Consumed.with(S, S));
  input.groupBy((_k, v) => v, Grouped.with(S, S).withName('by-value')).count(Materialized.as('counts'));
  input.groupByKey().windowedBy(TimeWindows.ofSizeWithNoGrace(WINDOW_MS)).count(Materialized.as('windowed'));
  input
    .groupByKey()
    .count(Materialized.as<string, number>('own').withLoggingEnabled({ 'segment.bytes': '2097152' }));
  return builder.build();
}

describe('internal topic configs', () => {
  const cluster = useStreamsBroker({ in: 2 }, 1);

  it('topic.-prefixed properties reach every internal topic, under the store log configs, as Kafka', async () => {
    const streams = new KafkaStreams(topology(), {
      'application.id': 'itc',
      'bootstrap.servers': cluster.bootstrap,
      'state.dir': cluster.dirs[0]!,
      'topic.segment.bytes': 1_048_576,
      'topic.retention.ms': '3600000',
    });
    const admin = new Admin({ bootstrapServers: cluster.bootstrap });
    try {
      await streams.start();
      const keys = ['cleanup.policy', 'retention.ms', 'segment.bytes'];
      const configs = await admin.describeConfigs(
        [
          'itc-by-value-repartition',
          'itc-counts-changelog',
          'itc-windowed-changelog',
          'itc-own-changelog',
        ].map((name) => ({ type: 'topic' as const, name, keys })),
      );
      const got = Object.fromEntries(
        configs.map((c) => {
          assert.equal(c.error, null, c.name);
          return [c.name, Object.fromEntries(c.configs.map((e) => [e.name, e.value]))];
        }),
      );
      assert.deepEqual(got, {
        'itc-by-value-repartition': {
          'cleanup.policy': 'delete',
          'retention.ms': '3600000',
          'segment.bytes': '1048576',
        },
        'itc-counts-changelog': {
          'cleanup.policy': 'compact',
          'retention.ms': '3600000',
          'segment.bytes': '1048576',
        },
        'itc-windowed-changelog': {
          'cleanup.policy': 'compact,delete',
          'retention.ms': String(WINDOW_MS + 86_400_000),
          'segment.bytes': '1048576',
        },
        'itc-own-changelog': {
          'cleanup.policy': 'compact',
          'retention.ms': '3600000',
          'segment.bytes': '2097152',
        },
      });
    } finally {
      await streams.close();
      await admin.close();
    }
  });
});
