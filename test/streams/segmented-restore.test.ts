// A persistent window store rebuilt from its changelog through a broker, the changelog's records out of time order
// within one produced batch. Kafka 3.9's AbstractRocksDBSegmentedBytesStore.getWriteBatches moves the store's
// stream time to the batch's largest window start, then skips the records whose segment is expired at that time;
// Brook moves it record by record and drops a segment once a later record expires it. Either way the store keeps
// the same windows: with 4 minutes of retention (segments of 2 minutes) and windows starting at minutes 1, 10, 2,
// 7 and 9 of a base B, the segments before the one holding B + 6 min are gone whatever the order (minutes 1 and
// 2), and B + 7 and B + 9 are read with B + 10.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  Materialized,
  QueryableStoreTypes,
  Serdes,
  StoreQueryParameters,
  StreamsBuilder,
  TimeWindows,
} from '../../src/streams/index.js';
import { windowStoreKey } from '../../src/streams/state/window-store.js';
import { waitUntil } from '../helpers/wait.js';
import { useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const L = Serdes.Long();
const APP = 'segrestore';
const MINUTE_MS = 60_000;
const CHANGELOG = `${APP}-wc-changelog`;

function topology() {
  const builder = new StreamsBuilder();
  builder
    .stream('segrestore-in', Consumed.with(S, S))
    .groupByKey()
    .windowedBy(TimeWindows.ofSizeWithNoGrace(MINUTE_MS))
    .count(Materialized.as<string, number>('wc').withRetention(4 * MINUTE_MS));
  return builder.build();
}

describe('a segmented store restored from an out-of-order changelog batch', () => {
  const env = useStreamsBroker({ 'segrestore-in': 1, [CHANGELOG]: 1 }, 1);

  it("keeps the windows Kafka's batch restoration keeps", async () => {
    // A multiple of the 2-minute segment interval, recent enough that the changelog's time retention keeps it.
    const base = Math.floor(Date.now() / (2 * MINUTE_MS)) * 2 * MINUTE_MS - 20 * MINUTE_MS;
    const minutes = [1, 10, 2, 7, 9];
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    try {
      await producer.sendBatch(
        minutes.map((minute, i) => ({
          topic: CHANGELOG,
          partition: 0,
          key: windowStoreKey(Buffer.from(String.fromCharCode(97 + i)), base + minute * MINUTE_MS),
          value: L.serialize('', minute)!,
          timestamp: base + minute * MINUTE_MS,
        })),
      );
    } finally {
      await producer.close();
    }
    const streams = new KafkaStreams(topology(), {
      'application.id': APP,
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[0]!,
      'commit.interval.ms': 100,
    });
    try {
      await streams.start();
      await waitUntil(
        () => streams.state() === 'RUNNING' && streams.restoredRecords() === minutes.length,
        60_000,
        () => `${streams.state()}, ${streams.restoredRecords()} restored`,
      );
      const windows = streams.store(
        StoreQueryParameters.fromNameAndType('wc', QueryableStoreTypes.windowStore<string, number>()),
      );
      assert.deepEqual(
        windows.all().map((e) => [e.key.key, (e.key.window.start() - base) / MINUTE_MS, e.value]),
        [
          ['b', 10, 10],
          ['d', 7, 7],
          ['e', 9, 9],
        ],
      );
      assert.equal(windows.fetch('a', base + MINUTE_MS), null);
      assert.equal(windows.fetch('c', base + 2 * MINUTE_MS), null);
    } finally {
      await streams.close();
    }
  });
});
