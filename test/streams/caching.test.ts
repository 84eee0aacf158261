// Record caches (statestore.cache.max.bytes, Materialized.withCachingEnabled/Disabled): updates of a key between
// commits reach downstream and the changelog once, with the latest value. In the test driver (which commits
// after each input record, as Kafka's does) and through a broker, where a long commit interval lets many
// updates collapse; with caching off every update goes out. Final values are checked against a reference.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  KeyValue,
  Materialized,
  Produced,
  Serdes,
  SessionWindows,
  SlidingWindows,
  StreamsBuilder,
  TimeWindows,
  TopologyTestDriver,
  WindowedSerdes,
} from '../../src/streams/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { stateDir, TopicFollower } from './streams-helpers.js';

const S = Serdes.String();
const L = Serdes.Long();

function wordCount(caching: boolean, output = 'counts-out') {
  const builder = new StreamsBuilder();
  const m = Materialized.as<string, number>('word-counts');
  builder
    .stream('lines', Consumed.with(S, S))
    .flatMapValues((line) => line.split(' '))
    .groupBy((_k, w) => w, undefined)
    .count(caching ? m.withCachingEnabled() : m.withCachingDisabled())
    .toStream()
    .to(output, Produced.with(S, L));
  return builder.build();
}

describe('record caches in the test driver', () => {
  it('one input record updating a key three times forwards it once with caching, three times without', () => {
    for (const [caching, props, expected] of [
      [true, {}, ['a=3', 'b=1']],
      [false, {}, ['a=1', 'a=2', 'a=3', 'b=1']],
      [true, { 'statestore.cache.max.bytes': 0 }, ['a=1', 'a=2', 'a=3', 'b=1']],
    ] as const) {
      const driver = new TopologyTestDriver(wordCount(caching), props);
      try {
        driver.createInputTopic('lines', S, S).pipeInput('l1', 'a a a b', 1);
        const out = driver.createOutputTopic('counts-out', S, L).readKeyValuesToList();
        assert.deepEqual(
          out.map((kv) => `${kv.key}=${kv.value}`),
          expected,
          `caching ${caching} ${JSON.stringify(props)}`,
        );
        // Reads see the cache (and, after the flush, the store) either way.
        assert.equal(driver.getKeyValueStore<string, number>('word-counts')!.get('a'), 3);
        const changelog = driver.createOutputTopic(
          'dummy-topology-test-driver-app-id-word-counts-changelog',
          S,
          L,
        );
        assert.equal(changelog.getQueueSize(), expected.length, 'the changelog gets what goes downstream');
      } finally {
        driver.close();
      }
    }
  });

  it('a full cache evicts its least recently written keys early', () => {
    // Room for two entries: z evicts x (x=1 goes out), x evicts y, then x's last update stays cached.
    const driver = new TopologyTestDriver(wordCount(true), { 'statestore.cache.max.bytes': 150 });
    try {
      driver.createInputTopic('lines', S, S).pipeInput('l1', 'x y z x x', 1);
      const out = driver.createOutputTopic('counts-out', S, L).readKeyValuesToList();
      const last = new Map(out.map((kv) => [kv.key, kv.value]));
      assert.deepEqual(
        new Map([...last].sort()),
        new Map([
          ['x', 3],
          ['y', 1],
          ['z', 1],
        ]),
      );
      assert.deepEqual(
        out.map((kv) => `${kv.key}=${kv.value}`),
        ['x=1', 'y=1', 'z=1', 'x=3'],
      );
    } finally {
      driver.close();
    }
  });
});

describe('record caches of window stores in the test driver', () => {
  const windowedCount = (caching: boolean) => {
    const builder = new StreamsBuilder();
    const m = Materialized.as<string, number>('windowed-counts');
    builder
      .stream('lines', Consumed.with(S, S))
      .flatMapValues((line) => line.split(' '))
      .groupBy((_k, w) => w, undefined)
      .windowedBy(TimeWindows.ofSizeWithNoGrace(1000))
      .count(caching ? m.withCachingEnabled() : m.withCachingDisabled())
      .toStream()
      .to('windowed-out', Produced.with(WindowedSerdes.timeWindowedSerdeFrom(S, 1000), L));
    return builder.build();
  };

  it('a window updated three times by one input record is forwarded and logged once with caching', () => {
    for (const [caching, props, expected] of [
      [true, {}, ['a@0=3', 'b@0=1', 'a@1000=1']],
      [false, {}, ['a@0=1', 'a@0=2', 'a@0=3', 'b@0=1', 'a@1000=1']],
      [true, { 'statestore.cache.max.bytes': 0 }, ['a@0=1', 'a@0=2', 'a@0=3', 'b@0=1', 'a@1000=1']],
    ] as const) {
      const driver = new TopologyTestDriver(windowedCount(caching), props);
      try {
        const input = driver.createInputTopic('lines', S, S);
        input.pipeInput('l1', 'a a a b', 10);
        // Read before l2: at stream time 1500 the window of 0 is older than the retention (1000) and not read.
        assert.equal(
          driver.getTimestampedWindowStore<string, number>('windowed-counts')!.fetch('a', 0)?.value,
          3,
        );
        input.pipeInput('l2', 'a', 1500);
        const out = driver
          .createOutputTopic('windowed-out', WindowedSerdes.timeWindowedSerdeFrom(S, 1000), L)
          .readKeyValuesToList();
        assert.deepEqual(
          out.map((kv) => `${kv.key!.key}@${kv.key!.window.start()}=${kv.value}`),
          expected,
          `caching ${caching} ${JSON.stringify(props)}`,
        );
        const changelog = driver.createOutputTopic(
          'dummy-topology-test-driver-app-id-windowed-counts-changelog',
          S,
          L,
        );
        assert.equal(changelog.getQueueSize(), expected.length, 'the changelog gets what goes downstream');
      } finally {
        driver.close();
      }
    }
  });

  it('reads see cached windows before they are flushed, and a full cache evicts early', () => {
    // Room for about two windows: the third word's window evicts the first's.
    const driver = new TopologyTestDriver(windowedCount(true), { 'statestore.cache.max.bytes': 190 });
    try {
      driver.createInputTopic('lines', S, S).pipeInput('l1', 'x y z x x', 5);
      const out = driver
        .createOutputTopic('windowed-out', WindowedSerdes.timeWindowedSerdeFrom(S, 1000), L)
        .readKeyValuesToList()
        .map((kv) => `${kv.key!.key}=${kv.value}`);
      assert.ok(out.length > 3 && out.length < 5, `evictions sent some updates early: ${out.join(', ')}`);
      const last = new Map(out.map((e) => e.split('=') as [string, string]));
      assert.deepEqual(Object.fromEntries([...last].sort()), { x: '3', y: '1', z: '1' });
    } finally {
      driver.close();
    }
  });
});

describe('record caches of session stores in the test driver', () => {
  it('sessions merged within one commit go out and to the changelog once with caching', () => {
    for (const [caching, expected] of [
      [true, ['a@10-10=2', 'b@10-10=1']],
      [false, ['a@10-10=1', 'a@10-10=null', 'a@10-10=2', 'b@10-10=1']],
    ] as const) {
      const builder = new StreamsBuilder();
      const m = Materialized.as<string, number>('sessions');
      builder
        .stream('lines', Consumed.with(S, S))
        .flatMapValues((line) => line.split(' '))
        .groupBy((_k, w) => w, undefined)
        .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(100))
        .count(caching ? m.withCachingEnabled() : m.withCachingDisabled())
        .toStream()
        .to('session-out', Produced.with(WindowedSerdes.sessionWindowedSerdeFrom(S), L));
      const driver = new TopologyTestDriver(builder.build());
      try {
        driver.createInputTopic('lines', S, S).pipeInput('l1', 'a a b', 10);
        const out = driver
          .createOutputTopic('session-out', WindowedSerdes.sessionWindowedSerdeFrom(S), L)
          .readKeyValuesToList()
          .map((kv) => `${kv.key!.key}@${kv.key!.window.start()}-${kv.key!.window.end()}=${kv.value}`);
        assert.deepEqual(out, expected, `caching ${caching}`);
        const changelog = driver.createOutputTopic(
          'dummy-topology-test-driver-app-id-sessions-changelog',
          S,
          L,
        );
        assert.equal(changelog.getQueueSize(), expected.length, 'the changelog gets what goes downstream');
        assert.equal(driver.getSessionStore<string, number>('sessions')!.fetchSession('a', 10, 10), 2);
      } finally {
        driver.close();
      }
    }
  });
});

describe('record caches through a broker', () => {
  let broker: BrokerProcess;
  let bootstrap = '';
  const dir = stateDir();

  before(async () => {
    broker = await startBroker();
    bootstrap = broker.bootstrap;
    const admin = new Admin({ bootstrapServers: bootstrap });
    await admin.createTopics(
      ['lines', 'cached-out', 'uncached-out', 'clicks', 'sliding-cached-out', 'sliding-uncached-out'].map(
        (topic) => ({
          topic,
          numPartitions: 1,
          replicationFactor: 1,
        }),
      ),
    );
    await admin.close();
  });

  after(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('forwards far fewer updates with caching on, and the same final counts', async () => {
    const words = ['red', 'green', 'blue', 'cyan'];
    const lines = Array.from({ length: 200 }, (_, i) => `${words[i % 4]} ${words[(i * 7) % 4]} red`);
    const expected = new Map<string, number>();
    for (const l of lines) for (const w of l.split(' ')) expected.set(w, (expected.get(w) ?? 0) + 1);
    const totalWords = lines.length * 3;
    const producer = new Producer({ bootstrapServers: bootstrap });
    await producer.sendBatch(
      lines.map((l, i) => ({ topic: 'lines', key: Buffer.from(`${i}`), value: Buffer.from(l) })),
    );
    await producer.close();
    const run = async (caching: boolean) => {
      const output = caching ? 'cached-out' : 'uncached-out';
      const streams = new KafkaStreams(wordCount(caching, output), {
        'application.id': `caching-${caching}`,
        'bootstrap.servers': bootstrap,
        'state.dir': dir,
        // Long enough that the whole input is processed between two commits.
        'commit.interval.ms': 3000,
      });
      const follower = new TopicFollower(bootstrap, output, 1);
      follower.start();
      try {
        await streams.start();
        await waitUntil(
          () => [...expected].every(([w, n]) => follower.latest.get(w)?.readBigInt64BE(0) === BigInt(n)),
          60_000,
          () =>
            `${output}: ${[...follower.latest].map(([k, v]) => `${k}=${v?.readBigInt64BE(0)}`).join(' ')}`,
        );
        return follower.records.length;
      } finally {
        await streams.close();
        await follower.stop();
      }
    };
    const cached = await run(true);
    const uncached = await run(false);
    assert.equal(uncached, totalWords, 'without a cache every update goes out');
    assert.ok(cached < totalWords / 4, `with a cache, ${cached} updates for ${totalWords} words`);
    assert.ok(cached >= expected.size);
  });
  it('sliding windows: far fewer changelog records and updates with caching on, the same final counts', async () => {
    // Two keys, a record every 10 ms, windows of 100 ms: each window is updated about ten times, all within
    // one commit interval. Kafka caches sliding windows' aggregates as it caches time windows'.
    const DIFF_MS = 100;
    const input = Array.from({ length: 300 }, (_, i) => ({
      user: i % 2 === 0 ? 'ann' : 'bob',
      t: 1000 + 10 * i,
    }));
    const expected = new Map<string, number>();
    for (const user of ['ann', 'bob']) {
      const times = input.filter((i) => i.user === user).map((i) => i.t);
      const count = (s: number) => times.filter((t) => t >= s && t <= s + DIFF_MS).length;
      for (const t of times) {
        const s = Math.max(0, t - DIFF_MS);
        expected.set(`${user}@${s}-${s + DIFF_MS}`, count(s));
        if (times.some((u) => u > t && u <= t + 1 + DIFF_MS))
          expected.set(`${user}@${t + 1}-${t + 1 + DIFF_MS}`, count(t + 1));
      }
    }
    const producer = new Producer({ bootstrapServers: bootstrap });
    await producer.sendBatch(
      input.map((i) => ({
        topic: 'clicks',
        key: Buffer.from(i.user),
        value: Buffer.from('x'),
        timestamp: i.t,
      })),
    );
    await producer.close();
    const run = async (caching: boolean) => {
      const output = caching ? 'sliding-cached-out' : 'sliding-uncached-out';
      const builder = new StreamsBuilder();
      const m = Materialized.as<string, number>('sliding-counts');
      builder
        .stream('clicks', Consumed.with(S, S))
        .groupByKey()
        .windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(DIFF_MS, 1_000_000))
        .count(caching ? m.withCachingEnabled() : m.withCachingDisabled())
        .toStream()
        .map((w, c) => KeyValue.pair(`${w.key}@${w.window.start()}-${w.window.end()}`, c))
        .to(output, Produced.with(S, L));
      const applicationId = `sliding-caching-${caching}`;
      const streams = new KafkaStreams(builder.build(), {
        'application.id': applicationId,
        'bootstrap.servers': bootstrap,
        'state.dir': dir,
        // Long enough that the whole input is processed between two commits.
        'commit.interval.ms': 3000,
      });
      const follower = new TopicFollower(bootstrap, output, 1);
      const final = () =>
        new Map(
          [...follower.latest].map(([k, v]) => [k, v === null ? null : Number(v.readBigInt64BE(0))] as const),
        );
      follower.start();
      let updates = 0;
      try {
        await streams.start();
        await waitUntil(
          () => [...expected].every(([w, n]) => final().get(w) === n),
          60_000,
          () => `${output}: ${final().size} of ${expected.size} windows`,
        );
      } finally {
        await streams.close();
        await follower.stop();
        updates = follower.records.length;
      }
      assert.deepEqual(
        new Map([...final()].sort()),
        new Map([...expected].sort()),
        'no window other than the reference ones, each with its count',
      );
      const consumer = new Consumer({ bootstrapServers: bootstrap });
      try {
        const [end] = await consumer.endOffsets([
          { topic: `${applicationId}-sliding-counts-changelog`, partition: 0 },
        ]);
        return { updates, changelogRecords: end!.offset };
      } finally {
        await consumer.close();
      }
    };
    const cached = await run(true);
    const uncached = await run(false);
    assert.equal(
      uncached.changelogRecords,
      uncached.updates,
      'without a cache, each update is logged and forwarded',
    );
    assert.ok(
      cached.updates * 2 < uncached.updates,
      `updates: ${cached.updates} with a cache, ${uncached.updates} without`,
    );
    assert.ok(
      cached.changelogRecords * 2 < uncached.changelogRecords,
      `changelog records: ${cached.changelogRecords} with a cache, ${uncached.changelogRecords} without`,
    );
    assert.ok(cached.updates >= expected.size && cached.changelogRecords >= expected.size);
    console.log(
      `sliding windows: ${expected.size} windows; with a cache ${cached.updates} updates and ${cached.changelogRecords} changelog records, without ${uncached.updates} and ${uncached.changelogRecords}`,
    );
  });
});
