// Stream threads in worker threads (brook.topology.module) through a broker: with num.stream.threads 2 each
// thread runs in a worker of its own (two distinct threadIds, neither the test's), the tasks are split over both
// and both process records; under exactly_once_v2 every key's count updates, read with read_committed, are exactly
// 1..n (nothing lost, nothing twice); store() reads the counts held in both workers. A worker whose processor
// throws is replaced (REPLACE_THREAD) by a new worker and processing goes on.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { threadId } from 'node:worker_threads';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  type KafkaStreamsState,
  Materialized,
  QueryableStoreTypes,
  Serdes,
  StoreQueryParameters,
  StreamsBuilder,
  StreamsError,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { buildCountTopology } from './fixtures/worker-apps.js';
import { useStreamsBroker } from './streams-helpers.js';

const APP_MODULE = new URL('./fixtures/worker-apps.js', import.meta.url).href;
const KEYS = 40;
const RECORDS = 2000;

/** Every record of a topic read with read_committed from the beginning, until `done` says enough. */
async function readAll(
  bootstrap: string,
  topic: string,
  partitions: number,
  done: (records: { key: string; value: string }[]) => boolean,
  describeState: () => string,
): Promise<{ key: string; value: string }[]> {
  const consumer = new Consumer({ bootstrapServers: bootstrap, isolationLevel: 'read_committed' });
  const out: { key: string; value: string }[] = [];
  try {
    consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition })));
    await consumer.seekToBeginning(
      Array.from({ length: partitions }, (_, partition) => ({ topic, partition })),
    );
    const deadline = Date.now() + 120_000;
    while (!done(out)) {
      assert.ok(Date.now() < deadline, `timed out: ${out.length} records read; ${describeState()}`);
      for (const r of await consumer.poll(200))
        out.push({ key: r.key?.toString() ?? '', value: r.value?.toString() ?? '' });
    }
    return out;
  } finally {
    await consumer.close();
  }
}

function describeThreads(streams: KafkaStreams): string {
  return `${streams.state()} ${JSON.stringify(streams.metadataForLocalThreads())} processed ${streams.processedRecords()}`;
}

describe('stream threads in worker threads', () => {
  const env = useStreamsBroker({ 'mt-in': 4, 'mt-out': 4, 'mt-fail-in': 2, 'mt-fail-out': 2 }, 2);

  it('two workers share the tasks and count exactly once under exactly_once_v2; store() reads both', async () => {
    const streams = await KafkaStreams.fromModule(
      APP_MODULE,
      {
        'application.id': 'mt-count',
        'bootstrap.servers': env.bootstrap,
        'state.dir': env.dirs[0],
        'num.stream.threads': 2,
        'processing.guarantee': 'exactly_once_v2',
        'statestore.cache.max.bytes': 0,
        'session.timeout.ms': 10_000,
        'heartbeat.interval.ms': 1000,
      },
      'buildCountTopology',
    );
    const states: KafkaStreamsState[] = [];
    streams.setStateListener((s) => states.push(s));
    try {
      await streams.start();
      // Wait until both workers run two of the four tasks each, so that the input is split over both.
      await waitUntil(
        () =>
          streams.state() === 'RUNNING' &&
          streams
            .metadataForLocalThreads()
            .every((t) => t.threadState === 'RUNNING' && t.activeTasks.length === 2),
        90_000,
        () => describeThreads(streams),
      );
      const threads = streams.metadataForLocalThreads();
      const ids = threads.map((t) => t.workerThreadId);
      assert.equal(new Set(ids).size, 2, `two distinct worker threads: ${ids}`);
      assert.ok(!ids.includes(threadId), 'no stream thread runs on the test thread');

      const expected = new Map<string, number>();
      const producer = new Producer({ bootstrapServers: env.bootstrap });
      try {
        const batch = Array.from({ length: RECORDS }, (_, i) => {
          const key = `k${(i * 7) % KEYS}`;
          expected.set(key, (expected.get(key) ?? 0) + 1);
          return { topic: 'mt-in', key: Buffer.from(key), value: Buffer.from(`v${i}`) };
        });
        await producer.sendBatch(batch);
      } finally {
        await producer.close();
      }
      const out = await readAll(
        env.bootstrap,
        'mt-out',
        4,
        (rs) => rs.length >= RECORDS,
        () => describeThreads(streams),
      );
      // Exactly once: each key's updates are 1, 2, ..., n, nothing missing, nothing repeated.
      const counts = new Map<string, number[]>();
      const seenThreads = new Set<number>();
      for (const r of out) {
        const [n, tid] = r.value.split('@');
        counts.set(r.key, [...(counts.get(r.key) ?? []), Number(n)]);
        seenThreads.add(Number(tid));
      }
      assert.equal(out.length, RECORDS);
      for (const [key, n] of expected)
        assert.deepEqual(
          counts.get(key),
          Array.from({ length: n }, (_, i) => i + 1),
          `updates of ${key}`,
        );
      assert.deepEqual([...seenThreads].sort(), [...ids].sort(), 'both workers processed records');

      // Interactive queries read the counts of both workers' tasks.
      await waitUntil(
        () => streams.state() === 'RUNNING',
        30_000,
        () => describeThreads(streams),
      );
      const store = streams.store(
        StoreQueryParameters.fromNameAndType(
          'mt-counts',
          QueryableStoreTypes.keyValueStore<string, number>(),
        ),
      );
      for (const [key, n] of expected) assert.equal(store.get(key), n, `store() value of ${key}`);
      const all = store.all();
      assert.equal(all.length, KEYS);
      assert.equal(store.approximateNumEntries(), KEYS);
      assert.equal(streams.processedRecords(), RECORDS);
    } finally {
      await streams.close();
    }
    assert.equal(streams.state(), 'NOT_RUNNING');
    assert.deepEqual(states.slice(0, 2), ['REBALANCING', 'RUNNING'], states.join(','));
    assert.deepEqual(states.slice(-2), ['PENDING_SHUTDOWN', 'NOT_RUNNING'], states.join(','));
    assert.ok(!states.includes('ERROR'));
    assert.ok(
      streams.metadataForLocalThreads().every((t) => t.threadState === 'DEAD'),
      'every worker closed its thread',
    );
  });

  it('REPLACE_THREAD replaces the worker whose processor threw', async () => {
    const marker = join(env.dirs[1]!, 'thrown');
    process.env.BROOK_MT_MARKER = marker;
    const streams = await KafkaStreams.fromModule(
      APP_MODULE,
      {
        'application.id': 'mt-replace',
        'bootstrap.servers': env.bootstrap,
        'state.dir': env.dirs[1],
        'num.stream.threads': 2,
        'commit.interval.ms': 100,
        'session.timeout.ms': 10_000,
        'heartbeat.interval.ms': 1000,
      },
      'buildThrowingTopology',
    );
    const errors: string[] = [];
    const taskIds: (string | null)[] = [];
    const states: KafkaStreamsState[] = [];
    streams.setStateListener((s) => states.push(s));
    streams.setUncaughtExceptionHandler((e) => {
      // processing.exception.handler's default fails with Kafka's StreamsException, the processor's error its cause.
      errors.push((e.cause as Error | undefined)?.message ?? e.message);
      // Its task id crosses from the worker (Kafka's StreamsException.taskId()).
      taskIds.push(e instanceof StreamsError ? e.taskId : null);
      return 'REPLACE_THREAD';
    });
    const produce = async (partition: number, value: string): Promise<void> => {
      const producer = new Producer({ bootstrapServers: env.bootstrap });
      try {
        await producer.sendBatch([
          { topic: 'mt-fail-in', partition, key: Buffer.from('k'), value: Buffer.from(value) },
        ]);
      } finally {
        await producer.close();
      }
    };
    try {
      await streams.start();
      await waitUntil(
        () =>
          streams.state() === 'RUNNING' &&
          streams
            .metadataForLocalThreads()
            .every((t) => t.threadState === 'RUNNING' && t.activeTasks.length === 1),
        90_000,
        () => describeThreads(streams),
      );
      const before = streams.metadataForLocalThreads();
      await produce(0, 'boom');
      await waitUntil(
        () => existsSync(marker) && errors.length === 1,
        60_000,
        () => `errors ${errors}; ${describeThreads(streams)}`,
      );
      const failedId = Number(readFileSync(marker, 'utf8'));
      assert.ok(
        before.some((t) => t.workerThreadId === failedId),
        'a worker of the instance threw',
      );
      // A new worker takes the failed one's place: two threads again, the failed worker gone.
      await waitUntil(
        () => {
          const now = streams.metadataForLocalThreads();
          return (
            streams.state() === 'RUNNING' &&
            now.length === 2 &&
            now.every((t) => t.threadState === 'RUNNING' && t.activeTasks.length === 1) &&
            !now.some((t) => t.workerThreadId === failedId)
          );
        },
        90_000,
        () => describeThreads(streams),
      );
      const after = streams.metadataForLocalThreads();
      assert.ok(
        after.some((t) => t.threadName.endsWith('StreamThread-3')),
        'the replacement is thread 3',
      );
      assert.equal(new Set(after.map((t) => t.workerThreadId)).size, 2);
      await produce(1, 'b');
      await produce(0, 'c');
      const out = await readAll(
        env.bootstrap,
        'mt-fail-out',
        2,
        (rs) => ['BOOM', 'B', 'C'].every((v) => rs.some((r) => r.value.startsWith(`${v}@`))),
        () => `errors ${errors}; ${describeThreads(streams)}`,
      );
      // The failing record was processed again (at least once) by a live worker, not the failed one.
      const boom = out.filter((r) => r.value.startsWith('BOOM@')).map((r) => Number(r.value.split('@')[1]));
      assert.ok(boom.length >= 1 && boom.every((id) => id !== failedId), `BOOM by ${boom}`);
      assert.deepEqual(errors, ['boom']);
      assert.deepEqual(taskIds, ['0_0']);
      assert.ok(!states.includes('ERROR'));
    } finally {
      await streams.close();
      delete process.env.BROOK_MT_MARKER;
      rmSync(marker, { force: true });
    }
  });

  for (const response of ['SHUTDOWN_CLIENT', 'SHUTDOWN_APPLICATION'] as const)
    it(`${response}: a worker's error ends every worker and the client in ERROR`, async () => {
      const marker = join(env.dirs[1]!, `thrown-${response}`);
      process.env.BROOK_MT_MARKER = marker;
      const streams = await KafkaStreams.fromModule(
        APP_MODULE,
        {
          'application.id': `mt-${response.toLowerCase()}`,
          'bootstrap.servers': env.bootstrap,
          'state.dir': env.dirs[1],
          'num.stream.threads': 2,
          'commit.interval.ms': 100,
          'session.timeout.ms': 10_000,
          'heartbeat.interval.ms': 1000,
        },
        'buildThrowingTopology',
      );
      const states: KafkaStreamsState[] = [];
      streams.setStateListener((s) => states.push(s));
      const errors: string[] = [];
      streams.setUncaughtExceptionHandler((e) => {
        // processing.exception.handler's default fails with Kafka's StreamsException, the processor's error its cause.
        errors.push((e.cause as Error | undefined)?.message ?? e.message);
        return response;
      });
      try {
        await streams.start();
        // The topic may hold a "boom" of an earlier test already: then the error comes before RUNNING.
        await waitUntil(
          () => streams.state() === 'RUNNING' || errors.length > 0,
          90_000,
          () => describeThreads(streams),
        );
        const producer = new Producer({ bootstrapServers: env.bootstrap });
        try {
          await producer.sendBatch([
            { topic: 'mt-fail-in', partition: 0, key: Buffer.from('k'), value: Buffer.from('boom') },
          ]);
        } finally {
          await producer.close();
        }
        await waitUntil(
          () => streams.state() === 'ERROR',
          90_000,
          () => `errors ${errors}; states ${states}; ${describeThreads(streams)}`,
        );
        assert.deepEqual(errors, ['boom']);
        assert.ok(states.includes('PENDING_ERROR'));
        await waitUntil(
          () => streams.metadataForLocalThreads().every((t) => t.threadState === 'DEAD'),
          30_000,
          () => describeThreads(streams),
        );
      } finally {
        await streams.close();
        delete process.env.BROOK_MT_MARKER;
        rmSync(marker, { force: true });
      }
    });

  it('refuses a module that builds another topology and values that cannot reach a worker', async () => {
    const base = {
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[1],
      'num.stream.threads': 2,
      'brook.topology.module': APP_MODULE,
    };
    const other = new KafkaStreams(buildCountTopology(), {
      ...base,
      'application.id': 'mt-other',
      'brook.topology.module.export': 'buildThrowingTopology',
    });
    await assert.rejects(other.start(), /differs from the one given to KafkaStreams/);
    assert.equal(other.state(), 'ERROR');

    // The same table, but the instance's built with reuse.ktable.source.topics: describe() is equal, the table's
    // restore source is not (failed before: started, its workers writing a changelog never created).
    const reuse = { 'topology.optimization': 'reuse.ktable.source.topics' };
    const tableBuilder = new StreamsBuilder();
    tableBuilder.table('mt-in', Consumed.with(Serdes.String(), Serdes.String()), Materialized.as('mt-table'));
    const reusing = new KafkaStreams(tableBuilder.build(reuse), {
      ...base,
      ...reuse,
      'application.id': 'mt-reuse',
      'brook.topology.module.export': 'buildTableTopology',
    });
    await assert.rejects(reusing.start(), /differs from the one given to KafkaStreams/);
    assert.equal(reusing.state(), 'ERROR');
    assert.ok(other.metadataForLocalThreads().every((t) => t.threadState === 'DEAD'));

    const fn = new KafkaStreams(buildCountTopology(), {
      ...base,
      'application.id': 'mt-fn',
      'brook.topology.module.export': 'buildCountTopology',
      'default.deserialization.exception.handler': () => 'CONTINUE' as const,
    });
    await assert.rejects(fn.start(), /default\.deserialization\.exception\.handler.*streamsProps/);
    assert.equal(fn.state(), 'ERROR');
  });
});
