// Incremental fetch sessions (KIP-227) over the wire, as Kafka's FetchManager and IncrementalFetchContext answer
// them: which session ids and epochs open, continue or fail a session, that a session left without partitions is
// closed, and that a partition which returned records goes to the back of its session so that the next fetch
// reads the others first (one partition with a backlog must not take every response's bytes).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { createTopic, produceBatch } from '../helpers/wire-client.js';

const PARTITIONS = 3;
const BATCHES_PER_PARTITION = 6;
const NO_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

interface Position {
  readonly partition: number;
  readonly offset: number;
}

/** Fetch v12 (topic names) of `positions` in `topic`, with the session fields and forgotten partitions given. */
function sessionFetch(
  topic: string,
  sessionId: number,
  sessionEpoch: number,
  positions: readonly Position[],
  maxBytes: number,
  forgotten: readonly number[] = [],
) {
  return {
    clusterId: null,
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1n },
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes,
    isolationLevel: 0,
    sessionId,
    sessionEpoch,
    topics:
      positions.length === 0
        ? []
        : [
            {
              topic,
              topicId: NO_ID,
              partitions: positions.map((p) => ({
                partition: p.partition,
                currentLeaderEpoch: -1,
                fetchOffset: BigInt(p.offset),
                lastFetchedEpoch: -1,
                logStartOffset: -1n,
                partitionMaxBytes: 1 << 20,
                replicaDirectoryId: NO_ID,
              })),
            },
          ],
    forgottenTopicsData:
      forgotten.length === 0 ? [] : [{ topic, topicId: NO_ID, partitions: [...forgotten] }],
    rackId: '',
  };
}

/** Partition index -> the offset after the last batch the response carried for it (partitions with records). */
// biome-ignore lint/suspicious/noExplicitAny: decoded responses are read field by field, as in wire-client.ts.
function nextOffsets(response: any): Map<number, number> {
  const out = new Map<number, number>();
  for (const t of response.responses) {
    for (const p of t.partitions) {
      const bytes: Buffer = p.records ?? Buffer.alloc(0);
      let next = -1;
      for (let pos = 0; pos + 12 <= bytes.length; pos += 12 + bytes.readInt32BE(pos + 8)) {
        if (pos + 12 + bytes.readInt32BE(pos + 8) > bytes.length) break;
        next = batchHeader.lastOffset(bytes, pos) + 1;
      }
      if (next >= 0) out.set(p.partitionIndex, next);
    }
  }
  return out;
}

describe('incremental fetch sessions (KIP-227), over the wire', () => {
  const suite = useBrokerWithClient();

  it('reads the partitions that returned records last, so one with a backlog does not starve the others', async () => {
    const topic = 'session-rotation';
    await createTopic(suite.client, topic, { numPartitions: PARTITIONS, replicationFactor: 1 });
    for (let partition = 0; partition < PARTITIONS; partition++) {
      for (let i = 0; i < BATCHES_PER_PARTITION; i++) {
        const batch = buildBatch([{ value: Buffer.alloc(200, 97 + partition) }]);
        const r = await produceBatch(suite.client, topic, batch, 1, partition);
        assert.equal(r.errorCode, ErrorCode.NONE);
      }
    }
    // A response of one batch (max_bytes 1: only the first batch, KIP-74): which partition gets it shows the order
    // in which the broker reads the session's partitions.
    const positions = new Map<number, number>();
    for (let partition = 0; partition < PARTITIONS; partition++) positions.set(partition, 0);
    const all = [...positions].map(([partition, offset]) => ({ partition, offset }));
    const full = await suite.client.call(ApiKey.FETCH, 12, sessionFetch(topic, 0, 0, all, 1));
    assert.equal(full.errorCode, ErrorCode.NONE);
    const sessionId: number = full.sessionId;
    assert.ok(sessionId > 0, 'the full fetch opened a session');
    const served: number[] = [];
    let moved = nextOffsets(full);
    for (let epoch = 1; epoch <= 4; epoch++) {
      assert.equal(moved.size, 1, 'one batch per response');
      const [partition, offset] = [...moved][0]!;
      served.push(partition);
      positions.set(partition, offset);
      // An incremental fetch names only the partition whose position moved.
      const response = await suite.client.call(
        ApiKey.FETCH,
        12,
        sessionFetch(topic, sessionId, epoch, [{ partition, offset }], 1),
      );
      assert.equal(response.errorCode, ErrorCode.NONE);
      assert.equal(response.sessionId, sessionId);
      moved = nextOffsets(response);
    }
    served.push([...moved.keys()][0]!);
    // Kafka keeps a full fetch's order (0, 1, 2); from then on a partition that returned records goes to the back.
    assert.deepEqual(served, [0, 0, 1, 2, 0]);
  });

  it('opens a new session for a full fetch that names a session the broker does not know', async () => {
    const topic = 'session-unknown-id';
    await createTopic(suite.client, topic, { numPartitions: 1, replicationFactor: 1 });
    await produceBatch(suite.client, topic, buildBatch([{ value: 'x' }]), 1);
    const at0 = [{ partition: 0, offset: 0 }];
    // The Java client closes its session and asks for a new one this way (session id kept, epoch 0) after a failed
    // request, such as a broker restart that forgot every session.
    const reopened = await suite.client.call(
      ApiKey.FETCH,
      12,
      sessionFetch(topic, 123_456_789, 0, at0, 1 << 20),
    );
    assert.equal(reopened.errorCode, ErrorCode.NONE);
    assert.ok(reopened.sessionId > 0 && reopened.sessionId !== 123_456_789, 'a new session');
    assert.equal(nextOffsets(reopened).get(0), 1, 'a full response with the records');
    // No session id with an incremental epoch names no session.
    const noSession = await suite.client.call(ApiKey.FETCH, 12, sessionFetch(topic, 0, 5, at0, 1 << 20));
    assert.equal(noSession.errorCode, ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
  });

  it('closes a session whose last partition an incremental fetch forgets', async () => {
    const topic = 'session-emptied';
    await createTopic(suite.client, topic, { numPartitions: 1, replicationFactor: 1 });
    const full = await suite.client.call(
      ApiKey.FETCH,
      12,
      sessionFetch(topic, 0, 0, [{ partition: 0, offset: 0 }], 1 << 20),
    );
    const sessionId: number = full.sessionId;
    assert.ok(sessionId > 0);
    const emptied = await suite.client.call(
      ApiKey.FETCH,
      12,
      sessionFetch(topic, sessionId, 1, [], 1 << 20, [0]),
    );
    assert.equal(emptied.errorCode, ErrorCode.NONE);
    assert.equal(emptied.sessionId, 0, 'answered without a session');
    const after = await suite.client.call(ApiKey.FETCH, 12, sessionFetch(topic, sessionId, 2, [], 1 << 20));
    assert.equal(after.errorCode, ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
  });
});
