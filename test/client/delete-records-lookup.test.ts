// Admin.deleteRecords finds each partition's leader as Kafka 3.9's DeleteRecordsHandler does (PartitionLeaderStrategy,
// unknown topics not tolerated): a topic the metadata does not know fails its partitions with
// UNKNOWN_TOPIC_OR_PARTITION after that one lookup, not retried; a partition the metadata does not list yet, or
// lists without a leader, is looked up again until the call's timeout; a partition its leader answers
// NOT_LEADER_OR_FOLLOWER (an InvalidMetadataException) is looked up again and sent again, and one answered with
// another retriable error is sent again to the same leader without a lookup (AdminApiDriver keeps it mapped). Other
// partitions of the call are answered meanwhile.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import type {
  DeleteRecordsRequest,
  DeleteRecordsResponse,
} from '../../src/protocol/messages/21-delete-records.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useAdminWithBroker } from '../helpers/admin-suite.js';

const codeOf = (error: { code: number } | null): number => (error === null ? 0 : error.code);

/** Answers of DeleteRecords to rewrite: the partitions (topic-partition) whose next answer is this error code. */
const answerOnce = new Map<string, number>();

describe('Admin.deleteRecords leader lookup', () => {
  const suite = useAdminWithBroker({ defaultApiTimeoutMs: 10_000 });

  async function created(topic: string, numPartitions: number): Promise<void> {
    const [result] = await suite.admin.createTopics([{ topic, numPartitions }]);
    assert.equal(result!.error, null);
  }

  it('an unknown topic fails at once after one lookup; the known partition is deleted', async () => {
    await created('records-known', 1);
    const started = Date.now();
    const results = await suite.admin.deleteRecords([
      { topic: 'records-unknown', partition: 0, offset: 0 },
      { topic: 'records-known', partition: 0, offset: 0 },
    ]);
    assert.deepEqual(results.map((r) => [r.topic, codeOf(r.error)]).sort(), [
      ['records-known', ErrorCode.NONE],
      ['records-unknown', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
    assert.ok(Date.now() - started < 1_000, `answered after ${Date.now() - started} ms, not after retries`);
  });

  it('a partition the topic does not have is looked up until the timeout', async () => {
    await created('records-growing', 1);
    const started = Date.now();
    const results = await suite.admin.deleteRecords(
      [
        { topic: 'records-growing', partition: 0, offset: 0 },
        { topic: 'records-growing', partition: 1, offset: 0 },
      ],
      { timeoutMs: 1_500 },
    );
    const elapsedMs = Date.now() - started;
    assert.deepEqual(results.map((r) => [r.partition, codeOf(r.error)]).sort(), [
      [0, ErrorCode.NONE],
      [1, ErrorCode.REQUEST_TIMED_OUT],
    ]);
    assert.ok(
      elapsedMs >= 1_400,
      `the missing partition was looked up until the timeout, not ${elapsedMs} ms`,
    );
  });

  it('a partition that shows up during the call is deleted', async () => {
    await created('records-created', 1);
    const call = suite.admin.deleteRecords([{ topic: 'records-created', partition: 1, offset: 0 }], {
      timeoutMs: 8_000,
    });
    await new Promise((r) => setTimeout(r, 300));
    const [grown] = await suite.admin.createPartitions([{ topic: 'records-created', count: 2 }]);
    assert.equal(grown!.error, null);
    const [result] = await call;
    assert.equal(result!.error, null);
    assert.equal(result!.lowWatermark, 0);
  });

  it('NOT_LEADER_OR_FOLLOWER and a retriable answer are sent again', async () => {
    await created('records-moved', 2);
    suite.broker.interception.set((request) => {
      if (request.apiKey !== ApiKey.DELETE_RECORDS) return undefined;
      return request.handle().then((answer) => {
        const response = answer as DeleteRecordsResponse;
        return {
          ...response,
          topics: response.topics.map((t) => ({
            ...t,
            partitions: t.partitions.map((p) => {
              const key = `${t.name}-${p.partitionIndex}`;
              const code = answerOnce.get(key);
              answerOnce.delete(key);
              return code === undefined ? p : { ...p, errorCode: code, lowWatermark: -1n };
            }),
          })),
        };
      });
    });
    try {
      answerOnce.set('records-moved-0', ErrorCode.NOT_LEADER_OR_FOLLOWER);
      answerOnce.set('records-moved-1', ErrorCode.REQUEST_TIMED_OUT);
      const results = await suite.admin.deleteRecords([
        { topic: 'records-moved', partition: 0, offset: 0 },
        { topic: 'records-moved', partition: 1, offset: 0 },
      ]);
      assert.deepEqual(results.map((r) => [r.partition, codeOf(r.error), r.lowWatermark]).sort(), [
        [0, ErrorCode.NONE, 0],
        [1, ErrorCode.NONE, 0],
      ]);
      assert.equal(answerOnce.size, 0, 'both rewritten answers were given');
    } finally {
      suite.broker.interception.clear();
    }
  });

  it('a retriable answer that leaves the leader standing is sent again to it without a new lookup', async () => {
    // Kafka's DeleteRecordsHandler leaves a partition answered with a retriable error that is no
    // InvalidMetadataException (REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS) mapped to the same broker: the AdminApiDriver
    // sends it there again after the backoff, and only NOT_LEADER_OR_FOLLOWER and its kind send it back to lookup.
    await created('records-slow', 1);
    let metadataRequests = 0;
    let deleteRequests = 0;
    const answers = [ErrorCode.REQUEST_TIMED_OUT, ErrorCode.NOT_ENOUGH_REPLICAS];
    suite.broker.interception.set((request) => {
      if (request.apiKey === ApiKey.METADATA) metadataRequests++;
      if (request.apiKey !== ApiKey.DELETE_RECORDS) return undefined;
      deleteRequests++;
      return request.handle().then((answer) => {
        const response = answer as DeleteRecordsResponse;
        const code = answers.shift();
        if (code === undefined) return response;
        return {
          ...response,
          topics: response.topics.map((t) => ({
            ...t,
            partitions: t.partitions.map((p) => ({ ...p, errorCode: code, lowWatermark: -1n })),
          })),
        };
      });
    });
    try {
      const [result] = await suite.admin.deleteRecords([{ topic: 'records-slow', partition: 0, offset: 0 }]);
      assert.equal(result!.error, null);
      assert.equal(deleteRequests, 3, 'two retriable answers, then the deletion');
      assert.equal(metadataRequests, 1, 'the leader was looked up once');
    } finally {
      suite.broker.interception.clear();
    }
  });

  it('a leader error sends the partition back to lookup', async () => {
    await created('records-relookup', 1);
    let metadataRequests = 0;
    const answers = [ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH];
    suite.broker.interception.set((request) => {
      if (request.apiKey === ApiKey.METADATA) metadataRequests++;
      if (request.apiKey !== ApiKey.DELETE_RECORDS) return undefined;
      return request.handle().then((answer) => {
        const response = answer as DeleteRecordsResponse;
        const code = answers.shift();
        if (code === undefined) return response;
        return {
          ...response,
          topics: response.topics.map((t) => ({
            ...t,
            partitions: t.partitions.map((p) => ({ ...p, errorCode: code, lowWatermark: -1n })),
          })),
        };
      });
    });
    try {
      const [result] = await suite.admin.deleteRecords([
        { topic: 'records-relookup', partition: 0, offset: 0 },
      ]);
      assert.equal(result!.error, null);
      assert.equal(metadataRequests, 3, 'one lookup, and one after each leader error');
    } finally {
      suite.broker.interception.clear();
    }
  });

  it('a partition given twice is sent once, with its first offset, and answered once', async () => {
    // Kafka's Admin.deleteRecords takes a Map, so a partition is sent once; Brook's calls that take arrays keep the
    // first entry of a key, as createTopics and createPartitions do.
    await created('records-twice', 1);
    const sent: [string, number, bigint][] = [];
    suite.broker.interception.set((request) => {
      if (request.apiKey !== ApiKey.DELETE_RECORDS) return undefined;
      for (const t of (request.body as DeleteRecordsRequest).topics)
        for (const p of t.partitions) sent.push([t.name, p.partitionIndex, p.offset]);
      return request.handle();
    });
    try {
      // Offset 5 is beyond the empty partition's end (OFFSET_OUT_OF_RANGE): only the first entry, offset 0, may go.
      const results = await suite.admin.deleteRecords([
        { topic: 'records-twice', partition: 0, offset: 0 },
        { topic: 'records-twice', partition: 0, offset: 5 },
      ]);
      assert.deepEqual(sent, [['records-twice', 0, 0n]]);
      assert.deepEqual(
        results.map((r) => [r.topic, r.partition, codeOf(r.error), r.lowWatermark]),
        [['records-twice', 0, ErrorCode.NONE, 0]],
      );
    } finally {
      suite.broker.interception.clear();
    }
  });
});
