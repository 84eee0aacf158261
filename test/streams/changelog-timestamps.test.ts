// The timestamps of session and window store changelog records, read back from a broker. Kafka's change-logging
// session store (ChangeLoggingSessionBytesStore) and plain window store log every put and removal with the
// timestamp of the record being processed; its timestamped window store logs a put with the value's timestamp
// and a null put with the record's. A record cache writes an entry through within the record context that
// wrote it, so the entry's changelog record keeps that record's timestamp, whatever was processed after it.
// The broker's time retention of a compact,delete changelog reads these timestamps.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  type KeyValueStore,
  Materialized,
  type ProcessorContext,
  type Record,
  Serdes,
  type SessionStore,
  SessionWindows,
  Stores,
  StreamsBuilder,
  type TimestampedWindowStore,
  Topology,
} from '../../src/streams/index.js';
import { sessionStoreKey } from '../../src/streams/state/session-store.js';
import { windowStoreKey } from '../../src/streams/state/window-store.js';
import { leavingGroup, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const L = Serdes.Long();
const GAP_MS = 100;

interface LoggedRecord {
  key: string;
  value: string | null;
  timestamp: number;
}

/** The changelog's records from the beginning, once it has at least `count` (key and value as hex). */
async function readChangelog(bootstrap: string, topic: string, count: number): Promise<LoggedRecord[]> {
  const consumer = new Consumer({
    bootstrapServers: bootstrap,
    autoOffsetReset: 'earliest',
    allowAutoCreateTopics: false,
  });
  const out: LoggedRecord[] = [];
  try {
    consumer.assign([{ topic, partition: 0 }]);
    const deadline = Date.now() + 30_000;
    while (out.length < count) {
      if (Date.now() > deadline)
        throw new Error(`${out.length} of ${count} records of ${topic}: ${JSON.stringify(out)}`);
      for (const r of await consumer.poll(100))
        out.push({
          key: r.key?.toString('hex') ?? '',
          value: r.value?.toString('hex') ?? null,
          timestamp: r.timestamp,
        });
    }
  } finally {
    await consumer.close();
  }
  return out;
}

const sessionKey = (key: string, startMs: number, endMs: number) =>
  sessionStoreKey(Buffer.from(key), startMs, endMs).toString('hex');
const count = (n: number) => L.serialize('', n)!.toString('hex');

function sessionCounts(caching: boolean): Topology {
  const builder = new StreamsBuilder();
  const m = Materialized.as<string, number>('sessions');
  builder
    .stream('clicks', Consumed.with(S, S))
    .groupByKey()
    .windowedBy(SessionWindows.ofInactivityGapAndGrace(GAP_MS, 1_000_000))
    .count(caching ? m.withCachingEnabled() : m.withCachingDisabled());
  return builder.build();
}

describe('changelog record timestamps of session and window stores, through a broker', () => {
  const env = useStreamsBroker(
    { clicks: 1, 'clicks-cached': 1, papi: 1, 'papi-cached': 1, 'papi-forward': 1, 'papi-forwarded': 1 },
    5,
  );

  async function send(topic: string, records: [string, string, number][]): Promise<void> {
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    try {
      await producer.sendBatch(
        records.map(([key, value, timestamp]) => ({
          topic,
          key: Buffer.from(key),
          value: Buffer.from(value),
          timestamp,
        })),
      );
    } finally {
      await producer.close();
    }
  }

  it('a session merge logs its removal and its put with the merging record time, not the session end', async () => {
    const streams = new KafkaStreams(sessionCounts(false), {
      'application.id': 'session-ts',
      'bootstrap.servers': env.bootstrap,
      'commit.interval.ms': 100,
      'state.dir': env.dirs[0]!,
    });
    try {
      await streams.start();
      // a@250 joins the session [300, 300] (within the gap) into [250, 300]: that session ends after the record.
      await send('clicks', [
        ['a', 'x', 100],
        ['a', 'x', 300],
        ['a', 'x', 250],
      ]);
      const logged = await readChangelog(env.bootstrap, 'session-ts-sessions-changelog', 4);
      assert.deepEqual(logged, [
        { key: sessionKey('a', 100, 100), value: count(1), timestamp: 100 },
        { key: sessionKey('a', 300, 300), value: count(1), timestamp: 300 },
        { key: sessionKey('a', 300, 300), value: null, timestamp: 250 },
        { key: sessionKey('a', 250, 300), value: count(2), timestamp: 250 },
      ]);
    } finally {
      await streams.close(leavingGroup());
    }
  });

  it('a cached session is logged at commit with the time of the record that wrote it', async () => {
    const streams = new KafkaStreams(
      (() => {
        const builder = new StreamsBuilder();
        builder
          .stream('clicks-cached', Consumed.with(S, S))
          .groupByKey()
          .windowedBy(SessionWindows.ofInactivityGapAndGrace(GAP_MS, 1_000_000))
          .count(Materialized.as<string, number>('sessions').withCachingEnabled());
        return builder.build();
      })(),
      {
        'application.id': 'cached-session-ts',
        'bootstrap.servers': env.bootstrap,
        'commit.interval.ms': 500,
        'state.dir': env.dirs[1]!,
      },
    );
    const changelog = 'cached-session-ts-sessions-changelog';
    try {
      await streams.start();
      await send('clicks-cached', [
        ['a', 'x', 100],
        ['a', 'x', 300],
      ]);
      await readChangelog(env.bootstrap, changelog, 2);
      // Cached together until the next commit; b@50, processed last, must not lend its time to a's records.
      await send('clicks-cached', [
        ['a', 'x', 250],
        ['b', 'x', 50],
      ]);
      const logged = await readChangelog(env.bootstrap, changelog, 5);
      assert.deepEqual(logged.slice(2), [
        { key: sessionKey('a', 300, 300), value: null, timestamp: 250 },
        { key: sessionKey('a', 250, 300), value: count(2), timestamp: 250 },
        { key: sessionKey('b', 50, 50), value: count(1), timestamp: 50 },
      ]);
    } finally {
      await streams.close(leavingGroup());
    }
  });

  it('Processor API session and window stores log puts and removals with the record time', async () => {
    // For each record of time t: `put` puts the session [0, 9000] and the window at 0 (value time 7);
    // `remove` removes that session and null-puts that window.
    const topology = new Topology()
      .addSource({ name: 'src', keyDeserializer: S, valueDeserializer: S }, 'papi')
      .addProcessor(
        'writer',
        () => {
          let sessions: SessionStore<string, number>;
          let windows: TimestampedWindowStore<string, number>;
          return {
            init(c: ProcessorContext<string, number>) {
              sessions = c.getStateStore('papi-sessions');
              windows = c.getStateStore('papi-windows');
            },
            process(r: Record<string, string>) {
              if (r.value === 'put') {
                sessions.put(r.key, 0, 9000, 1);
                windows.put(r.key, { value: 1, timestamp: 7 }, 0);
              } else {
                sessions.remove(r.key, 0, 9000);
                windows.put(r.key, null, 0);
              }
            },
          };
        },
        'src',
      )
      .addStateStore(
        Stores.sessionStoreBuilder(Stores.persistentSessionStore('papi-sessions', 100_000), S, L),
        'writer',
      )
      .addStateStore(
        Stores.timestampedWindowStoreBuilder(
          Stores.persistentTimestampedWindowStore('papi-windows', 100_000, 1000, false),
          S,
          L,
        ),
        'writer',
      );
    const streams = new KafkaStreams(topology, {
      'application.id': 'papi-ts',
      'bootstrap.servers': env.bootstrap,
      'commit.interval.ms': 100,
      'state.dir': env.dirs[2]!,
    });
    try {
      await streams.start();
      await send('papi', [
        ['k', 'put', 1000],
        ['k', 'remove', 2000],
      ]);
      const sessionKeyHex = sessionKey('k', 0, 9000);
      assert.deepEqual(await readChangelog(env.bootstrap, 'papi-ts-papi-sessions-changelog', 2), [
        { key: sessionKeyHex, value: count(1), timestamp: 1000 },
        { key: sessionKeyHex, value: null, timestamp: 2000 },
      ]);
      const windowKeyHex = windowStoreKey(Buffer.from('k'), 0).toString('hex');
      assert.deepEqual(await readChangelog(env.bootstrap, 'papi-ts-papi-windows-changelog', 2), [
        { key: windowKeyHex, value: count(1), timestamp: 7 },
        { key: windowKeyHex, value: null, timestamp: 2000 },
      ]);
    } finally {
      await streams.close(leavingGroup());
    }
  });

  it('a cached window null put is logged at commit with the time of the record that wrote it', async () => {
    // `put` puts the key's window at 0 (value time 7), `remove` null-puts it, `other` puts another key's window.
    const topology = new Topology()
      .addSource({ name: 'src', keyDeserializer: S, valueDeserializer: S }, 'papi-cached')
      .addProcessor(
        'writer',
        () => {
          let windows: TimestampedWindowStore<string, number>;
          return {
            init(c: ProcessorContext<string, number>) {
              windows = c.getStateStore('cached-windows');
            },
            process(r: Record<string, string>) {
              windows.put(r.key, r.value === 'remove' ? null : { value: 1, timestamp: 7 }, 0);
            },
          };
        },
        'src',
      )
      .addStateStore(
        Stores.timestampedWindowStoreBuilder(
          Stores.inMemoryWindowStore('cached-windows', 100_000, 1000, false),
          S,
          L,
        ).withCachingEnabled(),
        'writer',
      );
    const streams = new KafkaStreams(topology, {
      'application.id': 'cached-window-ts',
      'bootstrap.servers': env.bootstrap,
      'commit.interval.ms': 500,
      'state.dir': env.dirs[3]!,
    });
    const changelog = 'cached-window-ts-cached-windows-changelog';
    try {
      await streams.start();
      await send('papi-cached', [['k', 'put', 1000]]);
      await readChangelog(env.bootstrap, changelog, 1);
      // Cached together until the next commit; z@3000, processed last, must not lend its time to k's tombstone.
      await send('papi-cached', [
        ['k', 'remove', 2000],
        ['z', 'other', 3000],
      ]);
      const logged = await readChangelog(env.bootstrap, changelog, 3);
      assert.deepEqual(logged.slice(1), [
        { key: windowStoreKey(Buffer.from('k'), 0).toString('hex'), value: null, timestamp: 2000 },
        { key: windowStoreKey(Buffer.from('z'), 0).toString('hex'), value: count(1), timestamp: 7 },
      ]);
    } finally {
      await streams.close(leavingGroup());
    }
  });
  it("a store written after a forward logs the writing processor's record time, not the forwarded one's", async () => {
    // Kafka's ProcessorContextImpl.forward gives the forwarding processor its record context back: the
    // changelog record of a put made after a forward has the time of the record being processed.
    const topology = new Topology()
      .addSource({ name: 'src', keyDeserializer: S, valueDeserializer: S }, 'papi-forward')
      .addProcessor(
        'forwarder',
        () => {
          let context: ProcessorContext<string, string>;
          let seen: KeyValueStore<string, string>;
          return {
            init(c: ProcessorContext<string, string>) {
              context = c;
              seen = c.getStateStore('seen');
            },
            process(r: Record<string, string>) {
              context.forward(r.withTimestamp(r.timestamp + 5000));
              seen.put(r.key, r.value);
            },
          };
        },
        'src',
      )
      .addSink({ name: 'out', keySerializer: S, valueSerializer: S }, 'papi-forwarded', 'forwarder')
      .addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore('seen'), S, S), 'forwarder');
    const streams = new KafkaStreams(topology, {
      'application.id': 'forward-ts',
      'bootstrap.servers': env.bootstrap,
      'commit.interval.ms': 100,
      'state.dir': env.dirs[4]!,
    });
    try {
      await streams.start();
      await send('papi-forward', [['k', 'v', 1000]]);
      assert.deepEqual(await readChangelog(env.bootstrap, 'forward-ts-seen-changelog', 1), [
        { key: Buffer.from('k').toString('hex'), value: Buffer.from('v').toString('hex'), timestamp: 1000 },
      ]);
      const [forwarded] = await readChangelog(env.bootstrap, 'papi-forwarded', 1);
      assert.equal(forwarded!.timestamp, 6000);
    } finally {
      await streams.close(leavingGroup());
    }
  });
});
