// count(Materialized) without a store name takes one more number of the name counter first, as Kafka's
// KGroupedStreamImpl, TimeWindowedKStreamImpl and SessionWindowedKStreamImpl do "for compatibility" (sliding windows
// and KGroupedTable do not): the generated store, and so its changelog topic, get Kafka's numbers. Through a broker
// the changelog Kafka would use is created.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  Materialized,
  Serdes,
  SessionWindows,
  SlidingWindows,
  StreamsBuilder,
  TimeWindows,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const L = Serdes.Long();

/** The store names of a count over `input`, given a Materialized without a name. */
function storeOf(count: (builder: StreamsBuilder) => void): string[] {
  const builder = new StreamsBuilder();
  count(builder);
  return [...builder.build().stores.keys()];
}

describe('count(Materialized) without a store name', () => {
  it("takes Kafka's store names", () => {
    const grouped = (b: StreamsBuilder) => b.stream('in', Consumed.with(S, S)).groupByKey();
    assert.deepEqual(
      storeOf((b) => grouped(b).count(Materialized.with(S, L))),
      ['KSTREAM-AGGREGATE-STATE-STORE-0000000002'],
    );
    assert.deepEqual(
      storeOf((b) => grouped(b).count()),
      ['KSTREAM-AGGREGATE-STATE-STORE-0000000001'],
    );
    assert.deepEqual(
      storeOf((b) => grouped(b).windowedBy(TimeWindows.ofSizeWithNoGrace(10)).count(Materialized.with(S, L))),
      ['KSTREAM-AGGREGATE-STATE-STORE-0000000002'],
    );
    assert.deepEqual(
      storeOf((b) =>
        grouped(b).windowedBy(SessionWindows.ofInactivityGapWithNoGrace(10)).count(Materialized.with(S, L)),
      ),
      ['KSTREAM-AGGREGATE-STATE-STORE-0000000002'],
    );
    // Kafka's SlidingWindowedKStreamImpl takes none (Brook's sliding count keeps a second store of records).
    assert.equal(
      storeOf((b) =>
        grouped(b).windowedBy(SlidingWindows.ofTimeDifferenceWithNoGrace(10)).count(Materialized.with(S, L)),
      )[0],
      'KSTREAM-AGGREGATE-STATE-STORE-0000000001',
    );
  });

  describe('through a broker', () => {
    const env = useStreamsBroker({ 'csn-in': 1 }, 1);

    it("creates Kafka's changelog topic", async () => {
      const app = 'csn-app';
      const props = {
        'application.id': app,
        'bootstrap.servers': env.bootstrap,
        'state.dir': env.dirs[0]!,
        'commit.interval.ms': 100,
      };
      const builder = new StreamsBuilder();
      builder.stream('csn-in', Consumed.with(S, S)).groupByKey().count(Materialized.with(S, L));
      const streams = new KafkaStreams(builder.build(), props);
      const producer = new Producer({ bootstrapServers: env.bootstrap });
      const admin = new Admin({ bootstrapServers: env.bootstrap });
      try {
        await streams.start();
        await producer.send({ topic: 'csn-in', key: Buffer.from('k'), value: Buffer.from('v') });
        await waitUntil(
          () => streams.processedRecords() >= 1,
          30_000,
          () => `processed ${streams.processedRecords()}`,
        );
        const internal = (await admin.listTopics()).filter((t) => t.startsWith(`${app}-`));
        assert.deepEqual(internal, [`${app}-KSTREAM-AGGREGATE-STATE-STORE-0000000002-changelog`]);
      } finally {
        await streams.close();
        await admin.close();
        await producer.close();
      }
    });
  });
});
