// The source task runner's offset commits (Kafka's SubmittedRecords): a periodic commit writes the offsets of the
// records acknowledged so far without waiting for the ones still in flight, and never an offset at or past a
// record that is not acknowledged, even when later records are. One record goes to a topic that cannot take it
// (min.insync.replicas=2 with one of its two replicas on a stopped broker: NOT_ENOUGH_REPLICAS, retried until
// delivery.timeout.ms); the records after it go to another topic and are acknowledged while it is retried. (Not one
// replica under a minimum of 2: the minimum is capped at the replicas assigned, as in Kafka 3.7+, and the record
// would be taken.)

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Admin } from '../../src/client/index.js';
import { silentLogger } from '../../src/common/logger.js';
import type { TaskConfig } from '../../src/connect/api/connector.js';
import { SourceTask } from '../../src/connect/api/connector.js';
import { type SourceOffset, type SourcePartition, SourceRecord } from '../../src/connect/api/records.js';
import { ByteArrayConverter } from '../../src/connect/converters/byte-array-converter.js';
import { Schemas } from '../../src/connect/data/schema.js';
import { ErrorHandler } from '../../src/connect/runtime/error-handler.js';
import { Loggers } from '../../src/connect/runtime/loggers.js';
import { OffsetTable } from '../../src/connect/runtime/offset-store.js';
import type { Status } from '../../src/connect/runtime/status.js';
import { WorkerSourceTask } from '../../src/connect/runtime/worker-source-task.js';
import { TransformChain } from '../../src/connect/transforms/transformation.js';
import { type ShortIsrCluster, startShortIsrCluster } from '../helpers/short-isr-cluster.js';
import { waitUntil } from '../helpers/wait.js';

const PARTITION = { source: 'numbers' };
/** The record that cannot be written: offsets 0..STUCK-1 and STUCK+1.. go to the ok topic. */
const STUCK = 10;

let cluster: ShortIsrCluster | undefined;

before(async () => {
  cluster = await startShortIsrCluster({ strict: { 'min.insync.replicas': '2' } });
  const admin = new Admin({ bootstrapServers: cluster.bootstrap });
  try {
    await admin.createTopics([{ topic: 'ok', numPartitions: 1, replicationFactor: 1 }]);
  } finally {
    await admin.close();
  }
});

after(async () => {
  await cluster?.stop();
});

/** The offset store in memory, remembering every write. */
class RecordingStore extends OffsetTable {
  readonly written: number[] = [];
  async write(
    connector: string,
    entries: { partition: SourcePartition; offset: SourceOffset | null }[],
  ): Promise<void> {
    for (const e of entries) {
      this.data.set(JSON.stringify([connector, e.partition]), JSON.stringify(e.offset));
      this.written.push((e.offset as { n: number }).n);
    }
  }
}

/** Offsets 0..STUCK-1, then (after they are committed) STUCK, then one more record per poll. */
class NumbersTask extends SourceTask {
  next = 0;
  commits = 0;
  /** The highest offset whose record the broker acknowledged. */
  acked = -1;
  stopped = false;

  version(): string {
    return 'test';
  }
  start(_props: TaskConfig): void {}
  stop(): void {
    this.stopped = true;
  }

  private record(n: number): SourceRecord {
    return new SourceRecord({
      sourcePartition: PARTITION,
      sourceOffset: { n },
      topic: n === STUCK ? 'strict' : 'ok',
      kafkaPartition: 0,
      keySchema: Schemas.OPTIONAL_BYTES,
      key: null,
      valueSchema: Schemas.OPTIONAL_BYTES,
      value: Buffer.from(`record ${n}`),
    });
  }

  async poll(): Promise<SourceRecord[] | null> {
    if (this.next === 0) {
      this.next = STUCK;
      return Array.from({ length: STUCK }, (_, n) => this.record(n));
    }
    // The stuck record only once the ones before it are committed: the commit before it is not in question.
    if (this.next === STUCK && this.commits === 0) {
      await new Promise((r) => setTimeout(r, 20));
      return null;
    }
    await new Promise((r) => setTimeout(r, 20));
    return [this.record(this.next++)];
  }

  override commit(): void {
    this.commits++;
  }

  override commitRecord(record: SourceRecord, metadata: { offset: number } | null): void {
    if (metadata !== null) this.acked = Math.max(this.acked, (record.sourceOffset as { n: number }).n);
  }
}

test('a periodic commit goes on while a record is retried, and never stores an offset at or past it', async () => {
  const store = new RecordingStore();
  const task = new NumbersTask();
  const statuses: Status[] = [];
  const runner = new WorkerSourceTask(
    {
      id: { connector: 'numbers', task: 0 },
      workerId: 'test',
      connectorConfig: {},
      taskConfig: {},
      keyConverter: new ByteArrayConverter(),
      valueConverter: new ByteArrayConverter(),
      transforms: new TransformChain([]),
      errors: new ErrorHandler({
        connector: 'numbers',
        taskId: 0,
        tolerance: 'none',
        logEnable: false,
        logIncludeMessages: false,
        retryTimeoutMs: 0,
        retryDelayMaxMs: 0,
        dlqTopic: null,
        dlqContextHeaders: false,
        dlqProducer: null,
        log: silentLogger,
        dlqLog: silentLogger,
      }),
      bootstrapServers: cluster!.bootstrap,
      // The stuck record is retried for 8 s, then fails the task.
      producerOptions: { deliveryTimeoutMs: 8000, requestTimeoutMs: 3000 },
      consumerOptions: {},
      offsetFlushIntervalMs: 50,
      onStatus: (_id, status) => statuses.push(status),
      onTopicUsed: () => {},
      loggers: new Loggers(() => {}),
    },
    task,
    store,
  );
  runner.start(false);
  try {
    // The loop goes on while the stuck record is retried (a commit that flushed the producer would hold it until
    // the record's delivery timed out): records after it are polled and acknowledged.
    await waitUntil(
      () => task.acked >= STUCK + 5 && task.commits >= 1,
      30_000,
      () => `acked up to ${task.acked}, ${task.commits} commits, writes ${store.written.join(',')}`,
    );
    assert.ok(
      store.written.includes(STUCK - 1),
      `the records before the stuck one committed: ${store.written}`,
    );
    // Then the stuck record's delivery times out: the task fails.
    await waitUntil(
      () => runner.status().state === 'FAILED',
      30_000,
      () => `state ${runner.status().state}`,
    );
    assert.ok(task.acked > STUCK, 'later records were acknowledged');
    assert.ok(
      store.written.every((n) => n < STUCK),
      `no offset at or past the unacknowledged record: ${store.written}`,
    );
    assert.deepEqual(store.get('numbers', PARTITION), { n: STUCK - 1 });
  } finally {
    await runner.stop(10_000);
  }
  assert.ok(task.stopped);
  assert.ok(statuses.some((s) => s.state === 'RUNNING'));
});
