// A StreamsException's task id (Kafka's StreamsException.taskId()) and a failing cache flush, through a broker.
// Kafka's TaskExecutor names the task of an error of its processing or punctuation, and its TaskManager the task of
// an error of a commit during a revocation or a close; a periodic commit names none. Kafka's
// ProcessorStateManager.flushCache wraps a store's own error as "Failed to flush cache of store X" and flushes the
// other stores before it throws. The processing exception handler is told of an error carrying a Kafka error code,
// as Kafka's ProcessorNode hands over every error but a task migration or corruption.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { KafkaProtocolError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  Consumed,
  KafkaStreams,
  type KeyValueStore,
  type ProcessorContext,
  Produced,
  type Record,
  type Serde,
  Serdes,
  Stores,
  StreamsBuilder,
  type StreamsError,
  Topology,
} from '../../src/streams/index.js';
import { eventually, waitUntil } from '../helpers/wait.js';
import { appConfig, changelogEnd, TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();

async function produceTo(
  bootstrap: string,
  topic: string,
  records: { partition: number; value: string }[],
): Promise<void> {
  const producer = new Producer({ bootstrapServers: bootstrap });
  try {
    await producer.sendBatch(
      records.map((r, i) => ({
        topic,
        partition: r.partition,
        key: Buffer.from('k'),
        value: Buffer.from(r.value),
        timestamp: 1000 + i,
      })),
    );
  } finally {
    await producer.close();
  }
}

/** A string serde whose writes fail once `disk.gone` is set (a store whose disk went away). */
function failingSerde(disk: { gone: boolean }): Serde<string> {
  return {
    serialize(topic, value) {
      if (disk.gone) throw new Error('disk gone');
      return S.serialize(topic, value);
    },
    deserialize: (topic, bytes) => S.deserialize(topic, bytes),
  };
}

/**
 * in -> `put` (each value into the cached stores `failing`, then `healthy`, and onto `seen`; on "fail" the disk
 * goes away and the processor asks for a commit).
 */
function twoCachedStores(input: string, disk: { gone: boolean }, seen: string[] = []): Topology {
  return new Topology()
    .addSource({ name: 'src', keyDeserializer: S, valueDeserializer: S }, input)
    .addProcessor(
      'put',
      () => {
        let ctx: ProcessorContext<never, never>;
        return {
          init(c: ProcessorContext<never, never>) {
            ctx = c;
          },
          process(r: Record<string, string>) {
            ctx.getStateStore<KeyValueStore<string, string>>('failing').put(r.key, r.value);
            ctx.getStateStore<KeyValueStore<string, string>>('healthy').put(r.key, r.value);
            seen.push(r.value);
            if (r.value === 'fail') {
              disk.gone = true;
              ctx.commit();
            }
          },
        };
      },
      'src',
    )
    .addStateStore(
      Stores.keyValueStoreBuilder(
        Stores.inMemoryKeyValueStore('failing'),
        S,
        failingSerde(disk),
      ).withCachingEnabled(),
      'put',
    )
    .addStateStore(
      Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore('healthy'), S, S).withCachingEnabled(),
      'put',
    );
}

function failures(streams: KafkaStreams): StreamsError[] {
  const errors: StreamsError[] = [];
  streams.setUncaughtExceptionHandler((e) => {
    errors.push(e as StreamsError);
    return 'SHUTDOWN_CLIENT';
  });
  return errors;
}

describe("a StreamsException's task id and a failing cache flush through a broker", () => {
  const broker = useStreamsBroker(
    {
      'sx-in-1': 2,
      'sx-out-1': 1,
      'sx-in-2': 2,
      'sx-in-3': 1,
      'sx-in-4': 2,
      'sx-in-5': 1,
      'sx-in-6': 1,
      'sx-out-6': 1,
      'sx-in-7': 1,
    },
    8,
  );

  before(async () => {
    // A topic that refuses records over 1 KiB (MESSAGE_TOO_LARGE), for a send that fails at close.
    const admin = new Admin({ bootstrapServers: broker.bootstrap });
    try {
      const [r] = await admin.createTopics([
        {
          topic: 'sx-small-7',
          numPartitions: 1,
          replicationFactor: 1,
          configs: { 'max.message.bytes': '1024' },
        },
      ]);
      assert.equal(r!.error, null);
    } finally {
      await admin.close();
    }
  });

  it("a processing error reaches the uncaught exception handler with its task's id", async () => {
    const builder = new StreamsBuilder();
    builder
      .stream('sx-in-1', Consumed.with(S, S))
      .mapValues((v) => {
        if (v === 'boom') throw new Error('boom');
        return v;
      })
      .to('sx-out-1', Produced.with(S, S));
    const streams = new KafkaStreams(
      builder.build(),
      appConfig(broker.bootstrap, 'sx-process', broker.dirs[0]!),
    );
    const errors = failures(streams);
    try {
      await streams.start();
      await produceTo(broker.bootstrap, 'sx-in-1', [{ partition: 1, value: 'boom' }]);
      await waitUntil(
        () => errors.length > 0,
        60_000,
        () => streams.state(),
      );
      assert.equal(errors[0]!.name, 'StreamsException');
      assert.match(errors[0]!.message, /^Exception caught in process\. taskId=0_1, /);
      assert.equal(errors[0]!.taskId, '0_1');
    } finally {
      await streams.close();
    }
  });

  it("a wall-clock punctuator's error reaches it with its task's id", async () => {
    const builder = new StreamsBuilder();
    builder.stream('sx-in-2', Consumed.with(S, S)).process<string, string>(() => ({
      init(c) {
        c.schedule(50, 'WALL_CLOCK_TIME', () => {
          if (c.taskId === '0_1') throw new Error('punctuator failed');
        });
      },
      process() {},
    }));
    const streams = new KafkaStreams(
      builder.build(),
      appConfig(broker.bootstrap, 'sx-punctuate', broker.dirs[1]!),
    );
    const errors = failures(streams);
    try {
      await streams.start();
      await waitUntil(
        () => errors.length > 0,
        60_000,
        () => streams.state(),
      );
      assert.equal(
        errors[0]!.message,
        "Exception caught while punctuating processor 'KSTREAM-PROCESSOR-0000000001'",
      );
      assert.equal((errors[0]!.cause as Error).message, 'punctuator failed');
      assert.equal(errors[0]!.taskId, '0_1');
    } finally {
      await streams.close();
    }
  });

  it("a store whose cache fails to flush at a commit: Kafka's ProcessorStateException, the other stores flushed", async () => {
    const streams = new KafkaStreams(
      twoCachedStores('sx-in-3', { gone: false }),
      appConfig(broker.bootstrap, 'sx-flush', broker.dirs[2]!, { 'commit.interval.ms': 600_000 }),
    );
    const errors = failures(streams);
    try {
      await streams.start();
      await produceTo(broker.bootstrap, 'sx-in-3', [{ partition: 0, value: 'fail' }]);
      await waitUntil(
        () => errors.length > 0,
        60_000,
        () => streams.state(),
      );
      assert.equal(errors[0]!.name, 'ProcessorStateException');
      // The thread's name is Kafka's default client id (the application id and the process id) and its number.
      assert.match(
        errors[0]!.message,
        /^stream-thread \[sx-flush-[0-9a-f-]{36}-StreamThread-1\] stream-task \[0_0\] Failed to flush cache of store failing$/,
      );
      assert.equal((errors[0]!.cause as Error).message, 'disk gone');
      // A periodic (or requested) commit names no task, as Kafka's.
      assert.equal(errors[0]!.taskId, null);
      // The store after the failing one was flushed all the same: its entry reached its changelog.
      await eventually(
        async () => (await changelogEnd(broker.bootstrap, 'sx-flush-healthy-changelog', 0)) === 1,
        30_000,
        'the healthy store to reach its changelog',
      );
    } finally {
      await streams.close();
    }
  });

  it('a commit that fails while tasks are revoked names the revoked task', async () => {
    const disk = { gone: false };
    const seen: string[] = [];
    const first = new KafkaStreams(
      twoCachedStores('sx-in-4', disk, seen),
      appConfig(broker.bootstrap, 'sx-revoke', broker.dirs[3]!, { 'commit.interval.ms': 600_000 }),
    );
    const revoked: string[] = [];
    first.setLogger((m) => {
      const r = /: revoked (sx-in-4-\d)$/.exec(m);
      if (r !== null) revoked.push(r[1]!);
    });
    const errors = failures(first);
    const second = new KafkaStreams(
      twoCachedStores('sx-in-4', { gone: false }),
      appConfig(broker.bootstrap, 'sx-revoke', broker.dirs[4]!, { 'commit.interval.ms': 600_000 }),
    );
    try {
      await first.start();
      await waitUntil(
        () => first.state() === 'RUNNING',
        60_000,
        () => first.state(),
      );
      await produceTo(broker.bootstrap, 'sx-in-4', [
        { partition: 0, value: 'a' },
        { partition: 1, value: 'b' },
      ]);
      await waitUntil(
        () => seen.length === 2,
        60_000,
        () => `processed ${seen}`,
      );
      // Both tasks' caches hold an entry the failing store can no longer write; the second instance takes one.
      disk.gone = true;
      await second.start();
      await waitUntil(
        () => errors.length > 0,
        60_000,
        () => `${first.state()} revoked ${revoked}`,
      );
      assert.equal(revoked.length, 1);
      const taskId = `0_${revoked[0]!.slice(-1)}`;
      assert.equal(errors[0]!.taskId, taskId);
      assert.match(
        errors[0]!.message,
        new RegExp(`stream-task \\[${taskId}\\] Failed to flush cache of store failing$`),
      );
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it("a commit that fails at close is logged with the closed task's id (Kafka's completeShutdown logs it)", async () => {
    const disk = { gone: false };
    const seen: string[] = [];
    const streams = new KafkaStreams(
      twoCachedStores('sx-in-5', disk, seen),
      appConfig(broker.bootstrap, 'sx-close', broker.dirs[5]!, { 'commit.interval.ms': 600_000 }),
    );
    const logged: string[] = [];
    streams.setLogger((m) => logged.push(m));
    const errors = failures(streams);
    try {
      await streams.start();
      await produceTo(broker.bootstrap, 'sx-in-5', [{ partition: 0, value: 'a' }]);
      await waitUntil(
        () => seen.length === 1,
        60_000,
        () => streams.state(),
      );
      disk.gone = true;
    } finally {
      await streams.close();
    }
    assert.deepEqual(errors, []);
    const closing = logged.filter((m) => m.includes('Failed to close task manager'));
    assert.equal(closing.length, 1);
    assert.match(
      closing[0]!,
      /^sx-close-[0-9a-f-]{36}-StreamThread-1: Failed to close task manager due to the following error \(task 0_0\): stream-thread \[sx-close-[0-9a-f-]{36}-StreamThread-1\] stream-task \[0_0\] Failed to flush cache of store failing$/,
    );
  });

  it('an error carrying a Kafka error code goes to the processing exception handler, as any other', async () => {
    const builder = new StreamsBuilder();
    builder
      .stream('sx-in-6', Consumed.with(S, S))
      .mapValues((v) => {
        // A processor's own client call that failed: not a task migration, so the handler decides.
        if (v === 'boom') throw new KafkaProtocolError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'lookup failed');
        return v.toUpperCase();
      })
      .to('sx-out-6', Produced.with(S, S));
    const handled: string[] = [];
    const streams = new KafkaStreams(
      builder.build(),
      appConfig(broker.bootstrap, 'sx-coded', broker.dirs[6]!, {
        'processing.exception.handler': (_c: unknown, _r: unknown, e: Error) => {
          handled.push(e.message);
          return 'CONTINUE';
        },
      }),
    );
    const errors = failures(streams);
    const follower = new TopicFollower(broker.bootstrap, 'sx-out-6', 1);
    follower.start();
    try {
      await streams.start();
      await produceTo(broker.bootstrap, 'sx-in-6', [
        { partition: 0, value: 'a' },
        { partition: 0, value: 'boom' },
        { partition: 0, value: 'b' },
      ]);
      await waitUntil(
        () => follower.records.length >= 2 || errors.length > 0,
        60_000,
        () => streams.state(),
      );
      assert.deepEqual(
        errors.map((e) => e.message),
        [],
      );
      assert.deepEqual(
        follower.records.map((r) => r.value?.toString()),
        ['A', 'B'],
      );
      assert.deepEqual(handled, ['UNKNOWN_TOPIC_OR_PARTITION: lookup failed']);
      assert.equal(streams.droppedRecords(), 1);
    } finally {
      await streams.close();
      await follower.stop();
    }
  });

  it("a send that fails during the commit at close is logged with its record's task id", async () => {
    // The cached aggregate reaches the sink only when the close's commit flushes the cache; the topic refuses it.
    const builder = new StreamsBuilder();
    builder
      .stream('sx-in-7', Consumed.with(S, S))
      .groupByKey()
      .reduce((a, b) => a + b)
      .toStream()
      .to('sx-small-7', Produced.with(S, S));
    const streams = new KafkaStreams(
      builder.build(),
      appConfig(broker.bootstrap, 'sx-send', broker.dirs[7]!, { 'commit.interval.ms': 600_000 }),
    );
    const logged: string[] = [];
    streams.setLogger((m) => logged.push(m));
    try {
      await streams.start();
      await waitUntil(
        () => streams.state() === 'RUNNING',
        60_000,
        () => streams.state(),
      );
      await produceTo(broker.bootstrap, 'sx-in-7', [{ partition: 0, value: 'x'.repeat(4000) }]);
      await waitUntil(
        () => streams.processedRecords() === 1,
        60_000,
        () => `processed ${streams.processedRecords()}`,
      );
    } finally {
      await streams.close();
    }
    const closing = logged.filter((m) => m.includes('Failed to close task manager'));
    assert.equal(closing.length, 1);
    assert.match(
      closing[0]!,
      /^sx-send-[0-9a-f-]{36}-StreamThread-1: Failed to close task manager due to the following error \(task 0_0\): Error encountered sending record to topic sx-small-7 for task 0_0 due to:\nMESSAGE_TOO_LARGE/,
    );
  });
});
