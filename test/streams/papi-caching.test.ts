// Record caches of Processor API stores: a store built with Stores.keyValueStoreBuilder(...).withCachingEnabled()
// (or the timestamped builder) sits behind the same record cache as the DSL's stores (statestore.cache.max.bytes),
// as in Kafka: a key put many times between commits reaches the engine and the changelog once, reads see the
// latest put before the flush, and withCachingDisabled() turns it off again. Through a broker, a topology that
// puts the same keys many times within one commit interval writes far fewer changelog records with the cache,
// and the store's contents, live and restored from the changelog after a restart, are the same either way.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import {
  KafkaStreams,
  type KeyValueStore,
  type ProcessorContext,
  QueryableStoreTypes,
  Record,
  Serdes,
  type SessionStore,
  StoreQueryParameters,
  Stores,
  type TimestampedWindowStore,
  Topology,
  TopologyTestDriver,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { changelogEnd, leavingGroup, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const L = Serdes.Long();

type Builder = ReturnType<typeof Stores.keyValueStoreBuilder<string, number>>;

/**
 * Source `in` (values are numbers as text) -> `tally`, which adds each value to its key's sum in the store
 * `tallies`, `putsPerRecord` times over (the intermediate sums are put too), and forwards the sum to `out`.
 */
function tallyTopology(builder: Builder, putsPerRecord = 1, input = 'in', output = 'out'): Topology {
  return new Topology()
    .addSource({ name: 'src', keyDeserializer: S, valueDeserializer: S }, input)
    .addProcessor(
      'tally',
      () => {
        let ctx: ProcessorContext<string, number>;
        let store: KeyValueStore<string, number>;
        return {
          init(c: ProcessorContext<string, number>) {
            ctx = c;
            store = c.getStateStore('tallies');
          },
          process(r: Record<string, string>) {
            const add = Number(r.value);
            for (let i = 0; i < putsPerRecord; i++) store.put(r.key, (store.get(r.key) ?? 0) + add);
            ctx.forward(new Record(r.key, store.get(r.key)!, r.timestamp));
          },
        };
      },
      'src',
    )
    .addStateStore(builder, 'tally')
    .addSink({ name: 'sink', keySerializer: S, valueSerializer: L }, output, 'tally');
}

const inMemoryTallies = () => Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore('tallies'), S, L);
const CHANGELOG = 'dummy-topology-test-driver-app-id-tallies-changelog';

describe('Processor API stores with withCachingEnabled() in the test driver', () => {
  it('a key put three times by one input record reaches the changelog once with caching, three times without', () => {
    const cases: [string, Builder, { [key: string]: unknown }, number][] = [
      ['enabled', inMemoryTallies().withCachingEnabled(), {}, 2],
      ['default (off, as in Kafka)', inMemoryTallies(), {}, 6],
      ['enabled then disabled', inMemoryTallies().withCachingEnabled().withCachingDisabled(), {}, 6],
      [
        'enabled, persistent',
        Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore('tallies'), S, L).withCachingEnabled(),
        {},
        2,
      ],
      [
        'enabled, cache size 0',
        inMemoryTallies().withCachingEnabled(),
        { 'statestore.cache.max.bytes': 0 },
        6,
      ],
    ];
    for (const [name, builder, props, changelogRecords] of cases) {
      const driver = new TopologyTestDriver(tallyTopology(builder, 3), props);
      try {
        const input = driver.createInputTopic('in', S, S);
        input.pipeInput('a', '1', 10);
        input.pipeInput('a', '2', 20);
        const changelog = driver.createOutputTopic(CHANGELOG, S, L).readRecordsToList();
        assert.equal(changelog.length, changelogRecords, name);
        // The last changelog record holds the final sum, with the timestamp of the record that wrote it.
        assert.equal(changelog.at(-1)!.value, 9, name);
        assert.equal(changelog.at(-1)!.timestamp, 20, name);
        assert.deepEqual(
          driver.createOutputTopic('out', S, L).readValuesToList(),
          [3, 9],
          `${name}: reads in the processor see its latest puts`,
        );
        assert.equal(driver.getKeyValueStore<string, number>('tallies')!.get('a'), 9, name);
      } finally {
        driver.close();
      }
    }
  });

  it('reads see the latest put before a flush: get, range, all, putIfAbsent, delete', () => {
    const seen: unknown[] = [];
    const topology = new Topology()
      .addSource({ name: 'src', keyDeserializer: S, valueDeserializer: S }, 'in')
      .addProcessor(
        'reader',
        () => {
          let store: KeyValueStore<string, number>;
          return {
            init(c: ProcessorContext<string, number>) {
              store = c.getStateStore('tallies');
            },
            process(r: Record<string, string>) {
              if (r.value === 'fill') {
                store.put('a', 1);
                store.put('b', 2);
                store.put('c', 3);
                return;
              }
              // The second record: a, b and c are in the engine (the driver committed); write over them.
              store.put('b', 20);
              store.put('d', 4);
              store.put('b', 21);
              seen.push(store.get('b'), store.get('d'));
              seen.push(store.putIfAbsent('d', 40), store.putIfAbsent('e', 5));
              seen.push(store.delete('a'), store.get('a'));
              seen.push(
                store
                  .range('b', 'd')
                  .map((e) => `${e.key}=${e.value}`)
                  .join(' '),
              );
              seen.push(
                store
                  .all()
                  .map((e) => `${e.key}=${e.value}`)
                  .join(' '),
              );
            },
          };
        },
        'src',
      )
      .addStateStore(inMemoryTallies().withCachingEnabled(), 'reader');
    const driver = new TopologyTestDriver(topology);
    try {
      const input = driver.createInputTopic('in', S, S);
      input.pipeInput('x', 'fill', 10);
      const changelog = driver.createOutputTopic(CHANGELOG, S, L);
      assert.deepEqual(
        changelog.readKeyValuesToList().map((kv) => `${kv.key}=${kv.value}`),
        ['a=1', 'b=2', 'c=3'],
      );
      input.pipeInput('x', 'rewrite', 20);
      assert.deepEqual(seen, [21, 4, 4, null, 1, null, 'b=21 c=3 d=4', 'b=21 c=3 d=4 e=5']);
      // After the commit the changelog has each changed key once (b not 20, then 21), least recently written first.
      assert.deepEqual(
        changelog.readKeyValuesToList().map((kv) => `${kv.key}=${kv.value}`),
        ['d=4', 'b=21', 'e=5', 'a=null'],
      );
    } finally {
      driver.close();
    }
  });

  it('a timestamped Processor API store is cached too', () => {
    const writer = () =>
      new Topology().addSource({ name: 'src', keyDeserializer: S, valueDeserializer: S }, 'in').addProcessor(
        'writer',
        () => {
          let store: KeyValueStore<string, { value: number; timestamp: number }>;
          return {
            init(c: ProcessorContext<string, number>) {
              store = c.getStateStore('tallies');
            },
            process(r: Record<string, string>) {
              for (let i = 1; i <= 3; i++) store.put(r.key, { value: i, timestamp: r.timestamp + i });
            },
          };
        },
        'src',
      );
    for (const [caching, expected] of [
      [true, ['a=3@13']],
      [false, ['a=1@11', 'a=2@12', 'a=3@13']],
    ] as const) {
      const builder = Stores.timestampedKeyValueStoreBuilder(Stores.inMemoryKeyValueStore('tallies'), S, L);
      const driver = new TopologyTestDriver(
        writer().addStateStore(caching ? builder.withCachingEnabled() : builder, 'writer'),
      );
      try {
        driver.createInputTopic('in', S, S).pipeInput('a', 'x', 10);
        assert.deepEqual(
          driver
            .createOutputTopic(CHANGELOG, S, L)
            .readRecordsToList()
            .map((r) => `${r.key}=${r.value}@${r.timestamp}`),
          expected,
        );
      } finally {
        driver.close();
      }
    }
  });
});

const WINDOW_MS = 1000;
type WindowBuilder = ReturnType<typeof Stores.timestampedWindowStoreBuilder<string, number>>;
const inMemoryWindows = () =>
  Stores.timestampedWindowStoreBuilder(
    Stores.inMemoryWindowStore('window-tallies', 60 * WINDOW_MS, WINDOW_MS, false),
    S,
    L,
  );

/**
 * Source `input` -> `window-tally`, which adds each value to its key's sum in the record's 1-second window of the
 * store `window-tallies`, `putsPerRecord` times over, and forwards `key@windowStart` and the sum to `output`.
 */
function windowTallyTopology(
  builder: WindowBuilder,
  putsPerRecord = 1,
  input = 'in',
  output = 'out',
): Topology {
  return new Topology()
    .addSource({ name: 'src', keyDeserializer: S, valueDeserializer: S }, input)
    .addProcessor(
      'window-tally',
      () => {
        let ctx: ProcessorContext<string, number>;
        let store: TimestampedWindowStore<string, number>;
        return {
          init(c: ProcessorContext<string, number>) {
            ctx = c;
            store = c.getStateStore('window-tallies');
          },
          process(r: Record<string, string>) {
            const start = Math.floor(r.timestamp / WINDOW_MS) * WINDOW_MS;
            const add = Number(r.value);
            for (let i = 0; i < putsPerRecord; i++) {
              const sum = (store.fetch(r.key, start)?.value ?? 0) + add;
              store.put(r.key, { value: sum, timestamp: r.timestamp }, start);
            }
            ctx.forward(new Record(`${r.key}@${start}`, store.fetch(r.key, start)!.value, r.timestamp));
          },
        };
      },
      'src',
    )
    .addStateStore(builder, 'window-tally')
    .addSink({ name: 'sink', keySerializer: S, valueSerializer: L }, output, 'window-tally');
}

describe('Processor API window stores with withCachingEnabled() in the test driver', () => {
  it('a window put three times by one input record reaches the changelog once with caching, three times without', () => {
    const cases: [string, WindowBuilder, number][] = [
      ['enabled', inMemoryWindows().withCachingEnabled(), 3],
      ['default (off)', inMemoryWindows(), 9],
      ['enabled then disabled', inMemoryWindows().withCachingEnabled().withCachingDisabled(), 9],
      [
        'enabled, persistent',
        Stores.timestampedWindowStoreBuilder(
          Stores.persistentTimestampedWindowStore('window-tallies', 60 * WINDOW_MS, WINDOW_MS, false),
          S,
          L,
        ).withCachingEnabled(),
        3,
      ],
    ];
    for (const [name, builder, changelogRecords] of cases) {
      const driver = new TopologyTestDriver(windowTallyTopology(builder, 3));
      try {
        const input = driver.createInputTopic('in', S, S);
        input.pipeInput('a', '1', 10);
        input.pipeInput('a', '2', 20);
        input.pipeInput('a', '5', 1500);
        assert.equal(
          driver
            .createOutputTopic('dummy-topology-test-driver-app-id-window-tallies-changelog', S, L)
            .getQueueSize(),
          changelogRecords,
          name,
        );
        assert.deepEqual(
          driver
            .createOutputTopic('out', S, L)
            .readKeyValuesToList()
            .map((kv) => `${kv.key}=${kv.value}`),
          ['a@0=3', 'a@0=9', 'a@1000=15'],
          `${name}: reads see the latest puts`,
        );
        const store = driver.getTimestampedWindowStore<string, number>('window-tallies')!;
        assert.deepEqual(
          store
            .fetchRange('a', 0, 1000)
            .map((w) => `${w.windowStartMs}=${w.value.value}@${w.value.timestamp}`),
          ['0=9@20', '1000=15@1500'],
          name,
        );
      } finally {
        driver.close();
      }
    }
  });

  it('the window store suppliers check their arguments as Kafka does', () => {
    assert.throws(
      () => Stores.inMemoryWindowStore('w', 100, 1000, false),
      /retention period of the window store w must be no smaller than its window size/,
    );
    assert.throws(
      () => Stores.timestampedWindowStoreBuilder(Stores.inMemoryWindowStore('w', 1000, 100, true), S, L),
      /retainDuplicates is not supported/,
    );
  });
});

describe('Processor API session stores with withCachingEnabled() in the test driver', () => {
  it('a session put three times by one input record reaches the changelog once with caching, three times without', () => {
    // Each record puts its key's session [timestamp, timestamp] three times, with the counts 1, 2, 3.
    const topology = (builder: ReturnType<typeof Stores.sessionStoreBuilder<string, number>>) =>
      new Topology()
        .addSource({ name: 'src', keyDeserializer: S, valueDeserializer: S }, 'in')
        .addProcessor(
          'sessions',
          () => {
            let store: SessionStore<string, number>;
            return {
              init(c: ProcessorContext<string, number>) {
                store = c.getStateStore('session-tallies');
              },
              process(r: Record<string, string>) {
                for (let i = 1; i <= 3; i++) {
                  assert.equal(store.fetchSession(r.key, r.timestamp, r.timestamp), i === 1 ? null : i - 1);
                  store.put(r.key, r.timestamp, r.timestamp, i);
                }
              },
            };
          },
          'src',
        )
        .addStateStore(builder, 'sessions');
    const inMemory = () =>
      Stores.sessionStoreBuilder(Stores.inMemorySessionStore('session-tallies', 10_000), S, L);
    for (const [name, builder, expected] of [
      ['enabled', inMemory().withCachingEnabled(), ['a@10=3', 'a@20=3']],
      ['default (off)', inMemory(), ['a@10=1', 'a@10=2', 'a@10=3', 'a@20=1', 'a@20=2', 'a@20=3']],
      [
        'enabled, persistent',
        Stores.sessionStoreBuilder(
          Stores.persistentSessionStore('session-tallies', 10_000),
          S,
          L,
        ).withCachingEnabled(),
        ['a@10=3', 'a@20=3'],
      ],
    ] as const) {
      const driver = new TopologyTestDriver(topology(builder));
      try {
        const input = driver.createInputTopic('in', S, S);
        input.pipeInput('a', 'x', 10);
        input.pipeInput('a', 'x', 20);
        assert.deepEqual(
          driver
            .createOutputTopic(
              'dummy-topology-test-driver-app-id-session-tallies-changelog',
              Serdes.ByteArray(),
              L,
            )
            .readRecordsToList()
            .map((r) => `a@${r.timestamp}=${r.value}`),
          expected,
          name,
        );
        assert.deepEqual(
          driver
            .getSessionStore<string, number>('session-tallies')!
            .findSessions('a', 0, 100)
            .map((s) => `${s.startMs}=${s.value}`),
          ['10=3', '20=3'],
          name,
        );
      } finally {
        driver.close();
      }
    }
  });
});

describe('Processor API stores with withCachingEnabled() through a broker', () => {
  const broker = useStreamsBroker({ 'tally-in': 1, 'out-true': 1, 'out-false': 1 }, 1);
  // Five keys, 300 records a millisecond apart, all within one commit interval: each key's sum is put 60 times.
  const keys = ['k0', 'k1', 'k2', 'k3', 'k4'];
  const input = Array.from({ length: 300 }, (_, i) => ({
    key: keys[i % keys.length]!,
    add: (i % 7) + 1,
    timestamp: 1000 + 10 * i,
  }));

  before(async () => {
    const producer = new Producer({ bootstrapServers: broker.bootstrap });
    await producer.sendBatch(
      input.map((r) => ({
        topic: 'tally-in',
        key: Buffer.from(r.key),
        value: Buffer.from(String(r.add)),
        timestamp: r.timestamp,
      })),
    );
    await producer.close();
  });

  /**
   * Runs the topology to the end of the input and closes it (committing, so the cache is flushed), then starts
   * the application again, whose in-memory store is restored from the changelog. Returns the store's contents
   * while the first run was live and after the restoration, and the changelog's record count.
   */
  async function runAndRestore(
    app: string,
    topology: () => Topology,
    store: string,
    contents: (streams: KafkaStreams) => Map<string, number>,
    expectedEntries: number,
  ) {
    const open = () =>
      new KafkaStreams(topology(), {
        'application.id': app,
        'bootstrap.servers': broker.bootstrap,
        'state.dir': broker.dirs[0]!,
        // Long enough that the whole input is processed between two commits.
        'commit.interval.ms': 3000,
      });
    const first = open();
    let live: Map<string, number>;
    try {
      await first.start();
      await waitUntil(
        () => first.processedRecords() >= input.length && first.state() === 'RUNNING',
        60_000,
        () => `${app}: processed ${first.processedRecords()} of ${input.length}, ${first.state()}`,
      );
      live = contents(first);
    } finally {
      await first.close(leavingGroup()); // commits: the cache is flushed to the store and its changelog
    }
    const changelogRecords = await changelogEnd(broker.bootstrap, `${app}-${store}-changelog`, 0);
    const again = open();
    let restored: Map<string, number>;
    try {
      await again.start();
      await waitUntil(
        () => again.state() === 'RUNNING' && contents(again).size === expectedEntries,
        60_000,
        () => `${app}: ${again.state()}, restored ${again.restoredRecords()}`,
      );
      restored = contents(again);
      assert.equal(again.restoredRecords(), changelogRecords, `${app}: the whole changelog is restored`);
      assert.equal(
        again.processedRecords(),
        0,
        `${app}: the input offsets were committed with the flushed cache`,
      );
    } finally {
      await again.close();
    }
    return { live, restored, changelogRecords };
  }

  it('key-value: far fewer changelog records with caching, and the same contents, live and restored', async (t) => {
    const expected = new Map<string, number>();
    for (const r of input) expected.set(r.key, (expected.get(r.key) ?? 0) + r.add);
    const contents = (streams: KafkaStreams) =>
      new Map(
        streams
          .store(
            StoreQueryParameters.fromNameAndType(
              'tallies',
              QueryableStoreTypes.keyValueStore<string, number>(),
            ),
          )
          .all()
          .map((e) => [e.key, e.value] as const),
      );
    const run = (caching: boolean) =>
      runAndRestore(
        `papi-caching-${caching}`,
        () => {
          const builder = inMemoryTallies();
          return tallyTopology(
            caching ? builder.withCachingEnabled() : builder,
            1,
            'tally-in',
            `out-${caching}`,
          );
        },
        'tallies',
        contents,
        expected.size,
      );
    const cached = await run(true);
    const uncached = await run(false);
    t.diagnostic(
      `changelog records: ${cached.changelogRecords} cached, ${uncached.changelogRecords} uncached`,
    );
    assert.equal(uncached.changelogRecords, input.length, 'without a cache every put is logged');
    assert.ok(
      cached.changelogRecords < input.length / 10,
      `with a cache, ${cached.changelogRecords} changelog records for ${input.length} puts`,
    );
    assert.ok(cached.changelogRecords >= keys.length);
    for (const r of [cached.live, cached.restored, uncached.live, uncached.restored])
      assert.deepEqual(r, expected);
  });

  it('window: far fewer changelog records with caching, and the same contents, live and restored', async (t) => {
    const expected = new Map<string, number>();
    for (const r of input) {
      const w = `${r.key}@${Math.floor(r.timestamp / WINDOW_MS) * WINDOW_MS}`;
      expected.set(w, (expected.get(w) ?? 0) + r.add);
    }
    const contents = (streams: KafkaStreams) =>
      new Map(
        streams
          .store(
            StoreQueryParameters.fromNameAndType(
              'window-tallies',
              QueryableStoreTypes.windowStore<string, number>(),
            ),
          )
          .fetchAll(0, Number.MAX_SAFE_INTEGER)
          .map((e) => [`${e.key.key}@${e.key.window.start()}`, e.value] as const),
      );
    const run = (caching: boolean) =>
      runAndRestore(
        `papi-window-caching-${caching}`,
        () => {
          const builder = inMemoryWindows();
          return windowTallyTopology(
            caching ? builder.withCachingEnabled() : builder,
            1,
            'tally-in',
            `out-${caching}`,
          );
        },
        'window-tallies',
        contents,
        expected.size,
      );
    const cached = await run(true);
    const uncached = await run(false);
    t.diagnostic(
      `changelog records: ${cached.changelogRecords} cached, ${uncached.changelogRecords} uncached`,
    );
    assert.equal(uncached.changelogRecords, input.length, 'without a cache every put is logged');
    assert.ok(
      cached.changelogRecords < input.length / 5,
      `with a cache, ${cached.changelogRecords} changelog records for ${input.length} puts in ${expected.size} windows`,
    );
    assert.ok(cached.changelogRecords >= expected.size);
    for (const r of [cached.live, cached.restored, uncached.live, uncached.restored])
      assert.deepEqual(r, expected);
  });
  it('session: far fewer changelog records with caching, and the same contents, live and restored', async (t) => {
    // Each record adds to its key's session of its second: [start, start + 999].
    const expected = new Map<string, number>();
    for (const r of input) {
      const s = `${r.key}@${Math.floor(r.timestamp / WINDOW_MS) * WINDOW_MS}`;
      expected.set(s, (expected.get(s) ?? 0) + r.add);
    }
    const topology = (caching: boolean) => {
      const builder = Stores.sessionStoreBuilder(
        Stores.inMemorySessionStore('session-tallies', 60_000),
        S,
        L,
      );
      return new Topology()
        .addSource({ name: 'src', keyDeserializer: S, valueDeserializer: S }, 'tally-in')
        .addProcessor(
          'session-tally',
          () => {
            let store: SessionStore<string, number>;
            return {
              init(c: ProcessorContext<string, number>) {
                store = c.getStateStore('session-tallies');
              },
              process(r: Record<string, string>) {
                const start = Math.floor(r.timestamp / WINDOW_MS) * WINDOW_MS;
                const end = start + WINDOW_MS - 1;
                store.put(r.key, start, end, (store.fetchSession(r.key, start, end) ?? 0) + Number(r.value));
              },
            };
          },
          'src',
        )
        .addStateStore(caching ? builder.withCachingEnabled() : builder, 'session-tally');
    };
    const contents = (streams: KafkaStreams) => {
      const store = streams.store(
        StoreQueryParameters.fromNameAndType(
          'session-tallies',
          QueryableStoreTypes.sessionStore<string, number>(),
        ),
      );
      return new Map(
        keys.flatMap((k) =>
          store.fetch(k).map((e) => [`${e.key.key}@${e.key.window.start()}`, e.value] as const),
        ),
      );
    };
    const run = (caching: boolean) =>
      runAndRestore(
        `papi-session-caching-${caching}`,
        () => topology(caching),
        'session-tallies',
        contents,
        expected.size,
      );
    const cached = await run(true);
    const uncached = await run(false);
    t.diagnostic(
      `changelog records: ${cached.changelogRecords} cached, ${uncached.changelogRecords} uncached`,
    );
    assert.equal(uncached.changelogRecords, input.length, 'without a cache every put is logged');
    assert.ok(
      cached.changelogRecords < input.length / 5,
      `with a cache, ${cached.changelogRecords} changelog records for ${input.length} puts in ${expected.size} sessions`,
    );
    assert.ok(cached.changelogRecords >= expected.size);
    for (const r of [cached.live, cached.restored, uncached.live, uncached.restored])
      assert.deepEqual(r, expected);
  });
});
