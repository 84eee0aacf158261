// Admin.listOffsets answers each partition on its own, as Kafka 3.9's ListOffsetsResult holds one future per
// partition (partitionResult(tp)) and all() fails when any does: with { perPartition: true } a failed partition
// carries its error and the others their offsets; the array form throws the failure. Partitions go as Kafka's
// ListOffsetsHandler sends them: NOT_LEADER_OR_FOLLOWER and LEADER_NOT_AVAILABLE look the leader up again, another
// retriable error asks the same leader again, and a partition not answered by the call's timeout times out alone.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { ListOffsetsResponse } from '../../src/protocol/messages/02-list-offsets.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useAdminWithBroker } from '../helpers/admin-suite.js';

/** In rewriteAnswers: the partition is left out of the answer. */
const LEFT_OUT = -1;

const codeOf = (error: { code: number } | null): number => (error === null ? 0 : error.code);

describe('Admin.listOffsets per partition', () => {
  const suite = useAdminWithBroker({ defaultApiTimeoutMs: 10_000 });

  async function created(topic: string, numPartitions: number, records = 0): Promise<void> {
    const [result] = await suite.admin.createTopics([{ topic, numPartitions }]);
    assert.equal(result!.error, null);
    if (records === 0) return;
    const producer = new Producer({ bootstrapServers: `127.0.0.1:${suite.broker.port}` });
    try {
      for (let i = 0; i < records; i++) await producer.send({ topic, partition: 0, value: Buffer.from('x') });
    } finally {
      await producer.close();
    }
  }

  /**
   * Rewrites the ListOffsets answers of the partitions (topic-partition) named, one code per answer in turn
   * (LEFT_OUT: the answer leaves the partition out).
   */
  function rewriteAnswers(codes: Map<string, number[]>, counts: { metadata: number; listOffsets: number }) {
    suite.broker.interception.set((request) => {
      if (request.apiKey === ApiKey.METADATA) counts.metadata++;
      if (request.apiKey !== ApiKey.LIST_OFFSETS) return undefined;
      counts.listOffsets++;
      return request.handle().then((answer) => {
        const response = answer as ListOffsetsResponse;
        return {
          ...response,
          topics: response.topics.map((t) => ({
            ...t,
            partitions: t.partitions.flatMap((p) => {
              const code = codes.get(`${t.name}-${p.partitionIndex}`)?.shift();
              if (code === LEFT_OUT) return [];
              return code === undefined ? [p] : [{ ...p, errorCode: code, offset: -1n, timestamp: -1n }];
            }),
          })),
        };
      });
    });
  }

  it('an unknown topic fails its partition alone; the array form throws its error', async () => {
    await created('offsets-known', 1, 3);
    const requests = [
      { topic: 'offsets-unknown', partition: 0, spec: 'latest' as const },
      { topic: 'offsets-known', partition: 0, spec: 'latest' as const },
      { topic: '', partition: 0, spec: 'latest' as const },
    ];
    const results = await suite.admin.listOffsets(requests, { perPartition: true });
    assert.deepEqual(
      results.map((r) => [r.topic, r.partition, r.offset, codeOf(r.error)]),
      [
        ['offsets-unknown', 0, -1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
        ['offsets-known', 0, 3, ErrorCode.NONE],
        ['', 0, -1, ErrorCode.INVALID_TOPIC_EXCEPTION],
      ],
    );
    await assert.rejects(suite.admin.listOffsets(requests.slice(0, 2)), {
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
    });
  });

  it('a partition its leader refuses fails alone', async () => {
    await created('offsets-refused', 2);
    const counts = { metadata: 0, listOffsets: 0 };
    rewriteAnswers(new Map([['offsets-refused-1', [ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT]]]), counts);
    try {
      const results = await suite.admin.listOffsets(
        [
          { topic: 'offsets-refused', partition: 0, spec: 'earliest' },
          { topic: 'offsets-refused', partition: 1, spec: 'earliest' },
        ],
        { perPartition: true },
      );
      assert.deepEqual(
        results.map((r) => [r.partition, r.offset, codeOf(r.error)]),
        [
          [0, 0, ErrorCode.NONE],
          [1, -1, ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT],
        ],
      );
    } finally {
      suite.broker.interception.clear();
    }
  });

  it('a retriable error asks the same leader again; a leader error looks it up again', async () => {
    await created('offsets-retried', 2);
    const counts = { metadata: 0, listOffsets: 0 };
    rewriteAnswers(
      new Map([
        ['offsets-retried-0', [ErrorCode.OFFSET_NOT_AVAILABLE, ErrorCode.OFFSET_NOT_AVAILABLE]],
        ['offsets-retried-1', [ErrorCode.NOT_LEADER_OR_FOLLOWER]],
      ]),
      counts,
    );
    try {
      const results = await suite.admin.listOffsets(
        [
          { topic: 'offsets-retried', partition: 0, spec: 'latest' },
          { topic: 'offsets-retried', partition: 1, spec: 'latest' },
        ],
        { perPartition: true },
      );
      assert.deepEqual(
        results.map((r) => [r.partition, r.offset, codeOf(r.error)]),
        [
          [0, 0, ErrorCode.NONE],
          [1, 0, ErrorCode.NONE],
        ],
      );
      assert.equal(counts.listOffsets, 3, 'the first request, then two more for partition 0');
      assert.equal(counts.metadata, 2, 'one lookup, and one after NOT_LEADER_OR_FOLLOWER');
    } finally {
      suite.broker.interception.clear();
    }
  });

  it('a partition left out of an answer fails, unless another of that answer went back to the leader lookup', async () => {
    // As Kafka's ListOffsetsHandler sanity check: a left-out partition fails (ApiException) only when no partition
    // of the answer was unmapped; otherwise the AdminApiDriver keeps it mapped and sends it to its leader again.
    await created('offsets-left-out', 2, 1);
    const counts = { metadata: 0, listOffsets: 0 };
    rewriteAnswers(new Map([['offsets-left-out-1', [LEFT_OUT]]]), counts);
    const requests = [
      { topic: 'offsets-left-out', partition: 0, spec: 'latest' as const },
      { topic: 'offsets-left-out', partition: 1, spec: 'latest' as const },
    ];
    try {
      const alone = await suite.admin.listOffsets(requests, { perPartition: true });
      assert.deepEqual(
        alone.map((r) => [r.partition, r.offset, codeOf(r.error)]),
        [
          [0, 1, ErrorCode.NONE],
          [1, -1, ErrorCode.UNKNOWN_SERVER_ERROR],
        ],
      );
      rewriteAnswers(
        new Map([
          ['offsets-left-out-0', [ErrorCode.NOT_LEADER_OR_FOLLOWER]],
          ['offsets-left-out-1', [LEFT_OUT]],
        ]),
        counts,
      );
      const withUnmapped = await suite.admin.listOffsets(requests, { perPartition: true });
      assert.deepEqual(
        withUnmapped.map((r) => [r.partition, r.offset, codeOf(r.error)]),
        [
          [0, 1, ErrorCode.NONE],
          [1, 0, ErrorCode.NONE],
        ],
      );
    } finally {
      suite.broker.interception.clear();
    }
  });

  it('a partition the topic does not have times out alone at the call timeout', async () => {
    await created('offsets-short', 1, 2);
    const started = Date.now();
    const results = await suite.admin.listOffsets(
      [
        { topic: 'offsets-short', partition: 0, spec: 'latest' },
        { topic: 'offsets-short', partition: 1, spec: 'latest' },
      ],
      { perPartition: true, timeoutMs: 1_000 },
    );
    const elapsedMs = Date.now() - started;
    assert.deepEqual(
      results.map((r) => [r.partition, r.offset, codeOf(r.error)]),
      [
        [0, 2, ErrorCode.NONE],
        [1, -1, ErrorCode.REQUEST_TIMED_OUT],
      ],
    );
    assert.ok(elapsedMs >= 900 && elapsedMs < 5_000, `answered after ${elapsedMs} ms`);
  });
});
