// fetch.min.bytes over the wire, as Kafka's DelayedFetch counts it: each partition counts what it has past the
// fetch offset up to its partition max bytes (whether or not a whole batch fits), and a fetch whose offset lies in
// an older segment than the end it may read to is answered at once; and no fetch waits for more bytes than its
// response may carry. A fetch Kafka answers at once must not wait its max.wait.ms here.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { createTopic, produceBatch } from '../helpers/wire-client.js';

const NO_ID = 'AAAAAAAAAAAAAAAAAAAAAA';
const MAX_WAIT_MS = 4000;
/** Well under MAX_WAIT_MS: the fetch was answered without waiting. */
const AT_ONCE_MS = 2000;

interface Position {
  readonly partition: number;
  readonly offset: number;
  readonly maxBytes: number;
}

/** A sessionless Fetch v12 of `positions` in `topic` that waits for `minBytes`. */
function fetchRequest(topic: string, positions: readonly Position[], minBytes: number, maxBytes = 1 << 20) {
  return {
    clusterId: null,
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1n },
    maxWaitMs: MAX_WAIT_MS,
    minBytes,
    maxBytes,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [
      {
        topic,
        topicId: NO_ID,
        partitions: positions.map((p) => ({
          partition: p.partition,
          currentLeaderEpoch: -1,
          fetchOffset: BigInt(p.offset),
          lastFetchedEpoch: -1,
          logStartOffset: -1n,
          partitionMaxBytes: p.maxBytes,
          replicaDirectoryId: NO_ID,
        })),
      },
    ],
    forgottenTopicsData: [],
    rackId: '',
  };
}

// biome-ignore lint/suspicious/noExplicitAny: decoded responses are read field by field, as in wire-client.ts.
function recordBytes(response: any, partition: number): number {
  for (const t of response.responses) {
    for (const p of t.partitions) if (p.partitionIndex === partition) return p.records?.length ?? 0;
  }
  return 0;
}

describe('fetch.min.bytes as Kafka counts it, over the wire', () => {
  const suite = useBrokerWithClient();

  it('counts a later partition whose first batch is over its max bytes as its max bytes', async () => {
    const topic = 'min-bytes-big-batch';
    await createTopic(suite.client, topic, { numPartitions: 2, replicationFactor: 1 });
    const small = buildBatch([{ value: Buffer.alloc(100, 97) }]);
    const big = buildBatch([{ value: Buffer.alloc(3000, 98) }]);
    assert.equal((await produceBatch(suite.client, topic, small, 1, 0)).errorCode, ErrorCode.NONE);
    assert.equal((await produceBatch(suite.client, topic, big, 1, 1)).errorCode, ErrorCode.NONE);
    // Partition 0 returns its small batch; partition 1, read after it, cannot return its batch (over 1000 bytes,
    // and not the response's first). Kafka's DelayedFetch counts min(3000-odd, 1000) for it: 100 + 1000 >= 500.
    const started = Date.now();
    const response = await suite.client.call(
      ApiKey.FETCH,
      12,
      fetchRequest(
        topic,
        [
          { partition: 0, offset: 0, maxBytes: 1000 },
          { partition: 1, offset: 0, maxBytes: 1000 },
        ],
        500,
      ),
    );
    const elapsed = Date.now() - started;
    assert.equal(response.errorCode, ErrorCode.NONE);
    assert.equal(recordBytes(response, 0), small.length, 'partition 0 returns its batch');
    assert.ok(elapsed < AT_ONCE_MS, `answered at once, not after max.wait.ms (took ${elapsed} ms)`);
  });

  it('answers at once a fetch whose offset lies in an older segment than the high watermark', async () => {
    const topic = 'min-bytes-older-segment';
    await createTopic(suite.client, topic, {
      numPartitions: 1,
      replicationFactor: 1,
      configs: { 'segment.bytes': '1024' },
    });
    for (let i = 0; i < 6; i++) {
      const batch = buildBatch([{ value: Buffer.alloc(400, 100 + i) }]);
      assert.equal((await produceBatch(suite.client, topic, batch, 1, 0)).errorCode, ErrorCode.NONE);
    }
    // Offset 0's segment holds two batches, far below the 100000 bytes asked for; Kafka's DelayedFetch answers a
    // fetch from an older segment at once (a consumer catching up is not held at a segment's end).
    const started = Date.now();
    const response = await suite.client.call(
      ApiKey.FETCH,
      12,
      fetchRequest(topic, [{ partition: 0, offset: 0, maxBytes: 1 << 20 }], 100_000),
    );
    const elapsed = Date.now() - started;
    assert.equal(response.errorCode, ErrorCode.NONE);
    assert.ok(recordBytes(response, 0) > 0, 'the records of the older segment');
    assert.ok(elapsed < AT_ONCE_MS, `answered at once, not after max.wait.ms (took ${elapsed} ms)`);
  });

  it('asks no more than the response max bytes for fetch.min.bytes', async () => {
    const topic = 'min-bytes-over-max';
    await createTopic(suite.client, topic, { numPartitions: 1, replicationFactor: 1 });
    for (let i = 0; i < 3; i++) {
      const batch = buildBatch([{ value: Buffer.alloc(700, 110 + i) }]);
      assert.equal((await produceBatch(suite.client, topic, batch, 1, 0)).errorCode, ErrorCode.NONE);
    }
    // Kafka's KafkaApis takes min(min_bytes, max_bytes) as the bytes to wait for: a response of at most 2000 bytes
    // with more than that ready is answered at once, though 100000 bytes were asked for.
    const started = Date.now();
    const response = await suite.client.call(
      ApiKey.FETCH,
      12,
      fetchRequest(topic, [{ partition: 0, offset: 0, maxBytes: 1 << 20 }], 100_000, 2000),
    );
    const elapsed = Date.now() - started;
    assert.equal(response.errorCode, ErrorCode.NONE);
    assert.ok(recordBytes(response, 0) > 0, 'the batches that fit');
    assert.ok(elapsed < AT_ONCE_MS, `answered at once, not after max.wait.ms (took ${elapsed} ms)`);
  });
});
