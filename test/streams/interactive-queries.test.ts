// Interactive queries through a broker: KafkaStreams.store() with StoreQueryParameters and QueryableStoreTypes
// over a key-value count, a windowed count and a session count spread over two partitions (two tasks), each
// read against a reference computed here; the errors Kafka gives for unknown stores, wrong types and a client
// that is not running; queryMetadataForKey's partition and host.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { keyPartition } from '../../src/client/partitioners.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  InvalidStateStoreException,
  KafkaStreams,
  Materialized,
  QueryableStoreTypes,
  Serdes,
  SessionWindows,
  StoreQueryParameters,
  StreamsBuilder,
  TimeWindows,
} from '../../src/streams/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { seeded, stateDir } from './streams-helpers.js';

const S = Serdes.String();
const WINDOW_MS = 100;

function topology() {
  const builder = new StreamsBuilder();
  const grouped = builder.stream('plays', Consumed.with(S, S)).groupByKey();
  grouped.count(Materialized.as('plays-per-song'));
  grouped
    .windowedBy(TimeWindows.ofSizeAndGrace(WINDOW_MS, 100_000))
    .count(Materialized.as('plays-per-window'));
  grouped
    .windowedBy(SessionWindows.ofInactivityGapAndGrace(50, 100_000))
    .count(Materialized.as('listening-sessions'));
  return builder.build();
}

describe('interactive queries through a broker', () => {
  let broker: BrokerProcess;
  let bootstrap = '';
  const dir = stateDir();

  before(async () => {
    broker = await startBroker();
    bootstrap = broker.bootstrap;
    const admin = new Admin({ bootstrapServers: bootstrap });
    await admin.createTopics([{ topic: 'plays', numPartitions: 2, replicationFactor: 1 }]);
    await admin.close();
  });

  after(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads key-value, window and session stores across local tasks', async () => {
    const random = seeded(4);
    const songs = Array.from({ length: 12 }, (_, i) => `song-${String(i).padStart(2, '0')}`);
    const plays = Array.from({ length: 300 }, () => ({
      song: songs[Math.floor(random() * songs.length)]!,
      timestamp: Math.floor(random() * 1000),
    }));
    const counts = new Map<string, number>();
    const perWindow = new Map<string, number>();
    for (const p of plays) {
      counts.set(p.song, (counts.get(p.song) ?? 0) + 1);
      const w = `${p.song}@${Math.floor(p.timestamp / WINDOW_MS) * WINDOW_MS}`;
      perWindow.set(w, (perWindow.get(w) ?? 0) + 1);
    }
    const streams = new KafkaStreams(topology(), {
      'application.id': 'iq',
      'bootstrap.servers': bootstrap,
      'commit.interval.ms': 100,
      'state.dir': dir,
      'application.server': 'localhost:7070',
    });
    assert.throws(
      () =>
        streams.store(
          StoreQueryParameters.fromNameAndType('plays-per-song', QueryableStoreTypes.keyValueStore()),
        ),
      (e: Error) => e instanceof InvalidStateStoreException && /not RUNNING/.test(e.message),
    );
    const producer = new Producer({ bootstrapServers: bootstrap });
    try {
      await streams.start();
      await producer.sendBatch(
        plays.map((p) => ({
          topic: 'plays',
          key: Buffer.from(p.song),
          value: Buffer.from('x'),
          timestamp: p.timestamp,
        })),
      );
      await waitUntil(
        () => streams.processedRecords() >= plays.length && streams.state() === 'RUNNING',
        60_000,
        () => `processed ${streams.processedRecords()} of ${plays.length}, ${streams.state()}`,
      );
      const kv = streams.store(
        StoreQueryParameters.fromNameAndType(
          'plays-per-song',
          QueryableStoreTypes.keyValueStore<string, number>(),
        ),
      );
      for (const [song, n] of counts) assert.equal(kv.get(song), n, song);
      assert.equal(kv.get('no-such-song'), null);
      assert.equal(kv.approximateNumEntries(), counts.size);
      assert.deepEqual(new Map(kv.all().map((e) => [e.key, e.value])), counts);
      const inRange = kv
        .range('song-03', 'song-05')
        .map((e) => e.key)
        .sort();
      assert.deepEqual(inRange, ['song-03', 'song-04', 'song-05']);
      const timestamped = streams.store(
        StoreQueryParameters.fromNameAndType(
          'plays-per-song',
          QueryableStoreTypes.timestampedKeyValueStore<string, number>(),
        ),
      );
      const latest = Math.max(...plays.filter((p) => p.song === 'song-00').map((p) => p.timestamp));
      assert.deepEqual(timestamped.get('song-00'), { value: counts.get('song-00'), timestamp: latest });

      const windows = streams.store(
        StoreQueryParameters.fromNameAndType(
          'plays-per-window',
          QueryableStoreTypes.windowStore<string, number>(),
        ),
      );
      for (const [w, n] of perWindow) {
        const [song, start] = w.split('@') as [string, string];
        assert.equal(windows.fetch(song, Number(start)), n, w);
      }
      const song0 = windows.fetchRange('song-00', 0, 1000);
      assert.deepEqual(
        song0.map((e) => `song-00@${e.key}=${e.value}`),
        [...perWindow]
          .filter(([w]) => w.startsWith('song-00@'))
          .sort((a, b) => Number(a[0].split('@')[1]) - Number(b[0].split('@')[1]))
          .map(([w, n]) => `${w}=${n}`),
      );
      assert.equal(windows.all().length, perWindow.size);
      assert.equal(windows.all()[0]!.key.window.end() - windows.all()[0]!.key.window.start(), WINDOW_MS);

      const sessions = streams.store(
        StoreQueryParameters.fromNameAndType(
          'listening-sessions',
          QueryableStoreTypes.sessionStore<string, number>(),
        ),
      );
      for (const song of songs) {
        const total = sessions.fetch(song).reduce((n, s) => n + s.value, 0);
        assert.equal(total, counts.get(song) ?? 0, `sessions of ${song}`);
      }

      // One partition only: the keys of the other partition are not in it.
      const partition = keyPartition(Buffer.from('song-00'), 2);
      const one = streams.store(
        StoreQueryParameters.fromNameAndType(
          'plays-per-song',
          QueryableStoreTypes.keyValueStore<string, number>(),
        ).withPartition(partition),
      );
      assert.equal(one.get('song-00'), counts.get('song-00'));
      assert.ok(one.approximateNumEntries() < counts.size);

      assert.deepEqual(streams.queryMetadataForKey('plays-per-song', 'song-00', S), {
        partition,
        activeHost: { host: 'localhost', port: 7070 },
        standbyHosts: [],
      });
      assert.throws(
        () =>
          streams.store(StoreQueryParameters.fromNameAndType('nope', QueryableStoreTypes.keyValueStore())),
        /no such store is registered in the topology/,
      );
      assert.throws(
        () =>
          streams.store(
            StoreQueryParameters.fromNameAndType('plays-per-window', QueryableStoreTypes.keyValueStore()),
          ),
        /does not accept the actual store type/,
      );
    } finally {
      await streams.close();
      await producer.close();
    }
  });
});
