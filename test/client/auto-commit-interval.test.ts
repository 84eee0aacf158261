// The interval auto-commit's timing, as Kafka 3.9's consumers keep it. Classic (ConsumerCoordinator.onJoinComplete:
// nextAutoCommitTimer.updateAndReset): a completed rebalance starts the interval again, so the first interval commit
// after a SyncGroup comes a whole interval later. KIP-848 (CommitRequestManager.maybeAutoCommitAsync): while one
// interval commit waits for its answer no other starts (shouldAutoCommit), and none is retried. OffsetCommit and
// SyncGroup are seen as they reach an in-process broker. Classic (maybeAutoCommitOffsetsAsync): an interval commit
// answered with a retriable error is not retried; the next poll() commits again once retry.backoff.ms has passed
// (nextAutoCommitTimer.updateAndReset(retryBackoffMs)), with the positions of then.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { OffsetCommitRequest } from '../../src/protocol/messages/08-offset-commit.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { sleep } from '../helpers/wait.js';

const TOPIC = 'auto-commit-interval';
const OFFSET_COMMIT = 8;
const SYNC_GROUP = 14;

describe('the interval auto-commit', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'group.coordinator.rebalance.protocols': 'classic,consumer',
      'group.consumer.min.heartbeat.interval.ms': 100,
      'group.consumer.heartbeat.interval.ms': 200,
      'group.initial.rebalance.delay.ms': 0,
    });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([{ topic: TOPIC, numPartitions: 1, replicationFactor: 1 }]);
    const producer = new Producer({ bootstrapServers });
    for (let i = 0; i < 10; i++)
      await producer.send({ topic: TOPIC, partition: 0, value: Buffer.from(`v${i}`) });
    await producer.close();
  });
  after(async () => {
    broker?.interception.clear();
    await admin?.close();
    await broker?.stop();
  });

  it('a completed rebalance of a classic member starts the auto-commit interval again', async () => {
    const INTERVAL_MS = 3000;
    const clientId = 'auto-commit-classic';
    const events: Array<{ apiKey: number; atMs: number }> = [];
    broker.interception.set((request) => {
      if (
        request.header.clientId === clientId &&
        (request.apiKey === OFFSET_COMMIT || request.apiKey === SYNC_GROUP)
      )
        events.push({ apiKey: request.apiKey, atMs: Date.now() });
      return undefined;
    });
    const consumer = new Consumer({
      bootstrapServers,
      clientId,
      groupId: 'auto-commit-classic',
      autoOffsetReset: 'earliest',
      autoCommitIntervalMs: INTERVAL_MS,
    });
    const pollFor = async (ms: number): Promise<void> => {
      const until = Date.now() + ms;
      while (Date.now() < until) await consumer.poll(50);
    };
    try {
      consumer.subscribe([TOPIC]);
      const deadline = Date.now() + 20_000;
      while (!events.some((e) => e.apiKey === OFFSET_COMMIT)) {
        assert.ok(Date.now() < deadline, 'no interval auto-commit');
        await consumer.poll(50);
      }
      // Two thirds into the next interval the member rebalances (its join-prepare commit comes before the join).
      await pollFor((INTERVAL_MS * 2) / 3);
      consumer.enforceRebalance();
      const syncs = events.filter((e) => e.apiKey === SYNC_GROUP).length;
      while (events.filter((e) => e.apiKey === SYNC_GROUP).length === syncs) {
        assert.ok(Date.now() < deadline, 'the rebalance did not complete');
        await consumer.poll(50);
      }
      const syncedAtMs = events.filter((e) => e.apiKey === SYNC_GROUP).at(-1)!.atMs;
      await pollFor(INTERVAL_MS + 500 - (Date.now() - syncedAtMs));
      const next = events.find((e) => e.apiKey === OFFSET_COMMIT && e.atMs > syncedAtMs);
      assert.ok(next !== undefined, 'an interval commit followed the rebalance');
      assert.ok(
        next.atMs - syncedAtMs >= INTERVAL_MS - 200,
        `the first commit after the rebalance came ${next.atMs - syncedAtMs} ms after its SyncGroup`,
      );
    } finally {
      broker.interception.clear();
      await consumer.close();
    }
  });

  it('a classic interval commit answered with a retriable error is not retried; the next poll commits', async () => {
    const clientId = 'auto-commit-no-retry';
    const RETRY_BACKOFF_MS = 100;
    const commits: Array<{ atMs: number; refused: boolean }> = [];
    let refuse = true;
    broker.interception.set((request) => {
      if (request.header.clientId !== clientId || request.apiKey !== OFFSET_COMMIT) return undefined;
      commits.push({ atMs: Date.now(), refused: refuse });
      if (!refuse) return undefined;
      refuse = false;
      const body = request.body as OffsetCommitRequest;
      return {
        throttleTimeMs: 0,
        topics: body.topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => ({
            partitionIndex: p.partitionIndex,
            errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
          })),
        })),
      };
    });
    const consumer = new Consumer({
      bootstrapServers,
      clientId,
      groupId: 'auto-commit-no-retry',
      autoOffsetReset: 'earliest',
      autoCommitIntervalMs: 500,
      retryBackoffMs: RETRY_BACKOFF_MS,
      retryBackoffMaxMs: RETRY_BACKOFF_MS,
    });
    try {
      consumer.assign([{ topic: TOPIC, partition: 0 }]);
      const deadline = Date.now() + 20_000;
      while (commits.length === 0) {
        assert.ok(Date.now() < deadline, 'no interval auto-commit');
        await consumer.poll(50);
      }
      // No poll for a while: Kafka's auto-commit is made only inside poll(), and the refused one is not sent again.
      await sleep(2000);
      assert.deepEqual(
        commits.map((c) => c.refused),
        [true],
        'OffsetCommit requests while the application did not poll, after a refused interval commit',
      );
      // The refused commit brought the next one forward to the retry backoff: this poll makes it at once.
      const polledAtMs = Date.now();
      await consumer.poll(50);
      assert.equal(commits.length, 2, 'the poll after the backoff commits');
      assert.ok(commits[1]!.atMs - polledAtMs < 400, 'the commit went with that poll');
      const committed = await admin.listConsumerGroupOffsets('auto-commit-no-retry');
      assert.ok(committed.length === 1 && committed[0]!.offset > 0, 'the second commit reached the group');
    } finally {
      broker.interception.clear();
      await consumer.close();
    }
  });

  it('a KIP-848 member starts no interval commit while one is in flight', async () => {
    const INTERVAL_MS = 300;
    const DELAY_MS = 1500;
    const clientId = 'auto-commit-848';
    let inFlight = 0;
    let inFlightMax = 0;
    let commits = 0;
    broker.interception.set((request) => {
      if (request.header.clientId !== clientId || request.apiKey !== OFFSET_COMMIT) return undefined;
      commits++;
      inFlightMax = Math.max(inFlightMax, ++inFlight);
      return sleep(DELAY_MS)
        .then(() => request.handle())
        .finally(() => inFlight--);
    });
    const consumer = new Consumer({
      bootstrapServers,
      clientId,
      groupId: 'auto-commit-848',
      groupProtocol: 'consumer',
      autoOffsetReset: 'earliest',
      autoCommitIntervalMs: INTERVAL_MS,
    });
    try {
      consumer.subscribe([TOPIC]);
      const deadline = Date.now() + 20_000;
      let read = 0;
      while (read === 0) {
        assert.ok(Date.now() < deadline, 'nothing read');
        read += (await consumer.poll(100)).length;
      }
      await sleep(DELAY_MS * 2 + 500);
      assert.ok(commits >= 2, `the commit due while one was in flight went after it (${commits} commits)`);
      assert.equal(inFlightMax, 1, 'interval commits in flight at once');
    } finally {
      broker.interception.clear();
      await consumer.close({ timeoutMs: 3000 });
    }
  });
});
