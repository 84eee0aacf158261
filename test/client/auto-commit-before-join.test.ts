// enable.auto.commit around a rebalance of the classic protocol, as Kafka's ConsumerCoordinator.onJoinPrepare does
// it: before each JoinGroup the member commits the position of every partition it owns (not only those the
// rebalance will take away), so that with cooperative-sticky the partitions a member keeps have their offsets up to
// date right after the rebalance. A commit that fails for good (here: refused by the coordinator) is logged and the
// join goes on. Against an in-process broker.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type {
  OffsetCommitRequest,
  OffsetCommitResponse,
} from '../../src/protocol/messages/08-offset-commit.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'auto-commit-before-join';
const PARTITIONS = 4;
const RECORDS_PER_PARTITION = 3;

describe('auto commit before a rebalance joins', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'group.initial.rebalance.delay.ms': 0,
    });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([{ topic: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1 }]);
    const producer = new Producer({ bootstrapServers });
    for (let partition = 0; partition < PARTITIONS; partition++)
      for (let i = 0; i < RECORDS_PER_PARTITION; i++)
        await producer.send({ topic: TOPIC, partition, value: Buffer.from(`v${i}`) });
    await producer.close();
  });
  after(async () => {
    broker?.interception.clear();
    await admin?.close();
    await broker?.stop();
  });

  function member(groupId: string): Consumer {
    return new Consumer({
      bootstrapServers,
      groupId,
      autoOffsetReset: 'earliest',
      // No interval commit during the test: only the rebalance's commit can store the offsets.
      autoCommitIntervalMs: 600_000,
      heartbeatIntervalMs: 100,
      partitionAssignmentStrategy: ['cooperative-sticky'],
    });
  }

  async function committedOffsets(groupId: string): Promise<Map<number, number>> {
    const offsets = await admin.listConsumerGroupOffsets(groupId);
    return new Map(offsets.filter((o) => o.topic === TOPIC).map((o) => [o.partition, o.offset]));
  }

  /** Polls every member in turn until `done` holds. */
  async function pollUntil(members: Consumer[], done: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (!done() && Date.now() < deadline) await Promise.all(members.map((c) => c.poll(50)));
    assert.ok(done(), what);
  }

  it('a third member joining: the partitions the first two keep have their positions committed', async () => {
    const groupId = 'auto-commit-before-join-cooperative';
    const first = member(groupId);
    const second = member(groupId);
    const third = member(groupId);
    const read = new Map<string, number>();
    const count = (c: Consumer, name: string) => async () => {
      read.set(name, (read.get(name) ?? 0) + (await c.poll(50)).length);
    };
    try {
      first.subscribe([TOPIC]);
      second.subscribe([TOPIC]);
      const deadline = Date.now() + 15_000;
      const total = () => (read.get('first') ?? 0) + (read.get('second') ?? 0);
      while (total() < PARTITIONS * RECORDS_PER_PARTITION && Date.now() < deadline)
        await Promise.all([count(first, 'first')(), count(second, 'second')()]);
      assert.equal(total(), PARTITIONS * RECORDS_PER_PARTITION, 'the first two members read every record');
      assert.equal(first.assignment().length + second.assignment().length, PARTITIONS);
      const kept = [...first.assignment(), ...second.assignment()];
      third.subscribe([TOPIC]);
      await pollUntil(
        [first, second, third],
        () => third.assignment().length > 0,
        'the third member got partitions',
      );
      const stayed = kept.filter((tp) => !third.assignment().some((t) => t.partition === tp.partition));
      assert.ok(stayed.length > 0, 'some partitions stayed with their owner');
      const committed = await committedOffsets(groupId);
      for (const tp of stayed)
        assert.equal(
          committed.get(tp.partition),
          RECORDS_PER_PARTITION,
          `partition ${tp.partition}, kept through the rebalance, has its position committed`,
        );
    } finally {
      await Promise.all([first.close(), second.close(), third.close()]);
    }
  });

  it('a commit before the join that the coordinator refuses is given up and the join goes on', async () => {
    const groupId = 'auto-commit-before-join-refused';
    const c = member(groupId);
    let commitsSent = 0;
    try {
      c.subscribe([TOPIC]);
      let read = 0;
      const deadline = Date.now() + 15_000;
      while (read < PARTITIONS * RECORDS_PER_PARTITION && Date.now() < deadline)
        read += (await c.poll(50)).length;
      const generation = c.groupMetadata().generationId;
      broker.interception.set((request) => {
        if (request.apiKey !== ApiKey.OFFSET_COMMIT) return undefined;
        commitsSent++;
        const body = request.body as OffsetCommitRequest;
        const answer: OffsetCommitResponse = {
          throttleTimeMs: 0,
          topics: body.topics.map((t) => ({
            name: t.name,
            partitions: t.partitions.map((p) => ({
              partitionIndex: p.partitionIndex,
              errorCode: ErrorCode.OFFSET_METADATA_TOO_LARGE,
            })),
          })),
        };
        return answer;
      });
      c.enforceRebalance();
      while (c.groupMetadata().generationId === generation && Date.now() < deadline) await c.poll(50);
      assert.ok(c.groupMetadata().generationId > generation, 'the rebalance completed');
      assert.equal(commitsSent, 1, 'one commit was sent before the join, and not retried');
      assert.equal(c.assignment().length, PARTITIONS, 'the member kept its partitions');
    } finally {
      broker.interception.clear();
      await c.close();
    }
  });
});
