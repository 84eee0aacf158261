// KIP-207 with real brokers: a new leader's high watermark moves only once the followers in its ISR fetch from it,
// and until it reaches the log end the leader started its epoch at, it may be below the offsets the previous leader
// gave consumers. ListOffsets then answers a consumer OFFSET_NOT_AVAILABLE (LEADER_NOT_AVAILABLE before v5), both
// retriable, for the latest offset and for a timestamp it cannot place below the high watermark, instead of an
// end offset that goes backwards or "no record at that time"; the earliest offset and followers are answered.
//
// Brokers: 1 runs the controller (started first) and becomes the new leader; 0 leads first; 2 is a follower that
// is frozen (SIGSTOP) so that it stays in the ISR without fetching, which holds the new leader's high watermark.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { controllerOf, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { produceBatch, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'kip207';
const LATEST = -1n;
const EARLIEST = -2n;
/** The time of the records only broker 1 gets before the move: after the first ones'. */
const LATER_RECORDS_MS = Date.now() + 600_000;

interface Answer {
  errorCode: number;
  offset: bigint;
}

async function listOffsets(
  broker: BrokerProcess,
  timestamp: bigint,
  version = 7,
  replicaId = -1,
): Promise<Answer> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    const response = await client.call(ApiKey.LIST_OFFSETS, version, {
      replicaId,
      isolationLevel: 0,
      topics: [
        {
          name: TOPIC,
          partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp, maxNumOffsets: 1 }],
        },
      ],
      timeoutMs: 5000,
    });
    const p = response.topics[0].partitions[0];
    return { errorCode: p.errorCode, offset: p.offset };
  } finally {
    client.close();
  }
}

async function partitionSize(broker: BrokerProcess): Promise<bigint> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    const dirs = await client.call(ApiKey.DESCRIBE_LOG_DIRS, 4, { topics: null });
    const topic = dirs.results[0].topics.find((t: { name: string }) => t.name === TOPIC);
    return topic?.partitions[0]?.partitionSize ?? -1n;
  } finally {
    client.close();
  }
}

describe('ListOffsets at a new leader whose high watermark is behind its epoch start (KIP-207)', () => {
  let cluster: TestCluster | undefined;
  let frozen: BrokerProcess | undefined;

  before(async () => {
    cluster = await startCluster({
      order: [1, 0, 2],
      overrides: {
        // The frozen follower stays in the ISR (no lag eviction, no session expiry) for the whole test.
        'replica.lag.time.max.ms': 120_000,
        'zookeeper.session.timeout.ms': 60_000,
        'min.insync.replicas': 1,
      },
    });
  });
  after(async () => {
    if (frozen !== undefined) process.kill(frozen.pid, 'SIGCONT');
    await cluster?.stop();
  });

  it('answers OFFSET_NOT_AVAILABLE for latest and unplaced timestamps until the high watermark catches up', async () => {
    const brokers = cluster!.brokers;
    const [first, next, idle] = [brokers[0]!, brokers[1]!, brokers[2]!];
    assert.equal(await controllerOf(next), 1, 'broker 1 runs the controller');
    await createTopicOn(next, TOPIC, { assignments: { 0: [0, 1, 2] } });
    await waitFor('broker 0 leading with all three in sync', async () => {
      const v = await partitionView(next, TOPIC);
      return v?.leaderId === 0 && v.isrNodes.length === 3 ? v : undefined;
    });
    assert.deepEqual(await produceValues(first, TOPIC, ['a', 'b']), [0, 0]);

    // Broker 2 stops fetching: broker 0's high watermark stays at 2 while broker 1 copies two more records.
    process.kill(idle.pid, 'SIGSTOP');
    frozen = idle;
    const client = await WireClient.connect(first.host, first.port);
    try {
      for (const value of ['c', 'd']) {
        const batch = buildBatch([{ value, timestamp: LATER_RECORDS_MS }]);
        assert.equal((await produceBatch(client, TOPIC, batch, 1)).errorCode, ErrorCode.NONE);
      }
    } finally {
      client.close();
    }
    const leaderSize = await partitionSize(first);
    await waitFor('broker 1 to hold every record', async () =>
      (await partitionSize(next)) === leaderSize ? true : undefined,
    );

    // Broker 0 shuts down: the controller moves the partition to broker 1, with broker 2 still in the ISR.
    await first.stop();
    await waitFor('broker 1 leading', async () => {
      const answer = await listOffsets(next, EARLIEST);
      return answer.errorCode === ErrorCode.NONE ? answer : undefined;
    });
    assert.deepEqual(await listOffsets(next, EARLIEST), { errorCode: ErrorCode.NONE, offset: 0n });
    assert.equal((await listOffsets(next, LATEST)).errorCode, ErrorCode.OFFSET_NOT_AVAILABLE);
    assert.equal(
      (await listOffsets(next, BigInt(LATER_RECORDS_MS))).errorCode,
      ErrorCode.OFFSET_NOT_AVAILABLE,
      'the records of that time are above the high watermark',
    );
    assert.equal((await listOffsets(next, LATEST, 4)).errorCode, ErrorCode.LEADER_NOT_AVAILABLE);
    // A follower (replica id set) is answered the log end offset.
    assert.deepEqual(await listOffsets(next, LATEST, 7, 2), { errorCode: ErrorCode.NONE, offset: 4n });

    // Broker 2 fetches again: the high watermark reaches the epoch start and the offsets are answered.
    process.kill(idle.pid, 'SIGCONT');
    frozen = undefined;
    const latest = await waitFor('the latest offset to be answered', async () => {
      const answer = await listOffsets(next, LATEST);
      return answer.errorCode === ErrorCode.NONE ? answer : undefined;
    });
    assert.equal(latest.offset, 4n);
    assert.deepEqual(await listOffsets(next, BigInt(LATER_RECORDS_MS)), {
      errorCode: ErrorCode.NONE,
      offset: 2n,
    });
  });
});
