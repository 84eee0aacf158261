// TxnOffsetCommit answered with an error that means the group coordinator may have moved or is unreachable:
// as Kafka 3.9's TxnOffsetCommitHandler, the producer looks the group coordinator up again (FindCoordinator, key
// type 0) for COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR and REQUEST_TIMED_OUT, and retries the same coordinator
// for the other retriable errors. Against an in-process broker whose interceptor answers the first TxnOffsetCommit.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { FindCoordinatorRequest } from '../../src/protocol/messages/10-find-coordinator.js';
import type {
  TxnOffsetCommitRequest,
  TxnOffsetCommitResponse,
} from '../../src/protocol/messages/28-txn-offset-commit.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'txn-offset-commit-coordinator';
const GROUP_KEY_TYPE = 0;

/** Every partition of `request` answered `errorCode`. */
function answer(request: TxnOffsetCommitRequest, errorCode: number): TxnOffsetCommitResponse {
  return {
    throttleTimeMs: 0,
    topics: request.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })),
    })),
  };
}

/** Runs one transaction whose first TxnOffsetCommit is answered `errorCode`; counts the group lookups. */
async function groupLookupsAfter(
  errorCode: number,
): Promise<{ before: number; after: number; commits: number }> {
  const broker = await startInProcessBroker({
    'offsets.topic.num.partitions': 1,
    'transaction.state.log.num.partitions': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
  });
  let groupLookups = 0;
  let commits = 0;
  let answered = false;
  broker.interception.set((request) => {
    if (request.apiKey === ApiKey.FIND_COORDINATOR) {
      const body = request.body as FindCoordinatorRequest;
      if (body.keyType === GROUP_KEY_TYPE) groupLookups++;
    }
    if (request.apiKey !== ApiKey.TXN_OFFSET_COMMIT) return undefined;
    commits++;
    if (answered) return undefined;
    answered = true;
    return answer(request.body as TxnOffsetCommitRequest, errorCode);
  });
  const wire = await WireClient.connect(broker.host, broker.port);
  const producer = new Producer({ bootstrapServers: `127.0.0.1:${broker.port}`, transactionalId: 'txn-oc' });
  try {
    await createTopic(wire, TOPIC, { numPartitions: 1, replicationFactor: 1 });
    await producer.initTransactions();
    producer.beginTransaction();
    const before = groupLookups;
    await producer.sendOffsetsToTransaction([{ topic: TOPIC, partition: 0, offset: 5 }], 'txn-oc-group');
    await producer.commitTransaction();
    return { before, after: groupLookups, commits };
  } finally {
    await producer.close();
    wire.close();
    await broker.stop();
  }
}

it('TxnOffsetCommit answered REQUEST_TIMED_OUT looks the group coordinator up again', async () => {
  const { before, after, commits } = await groupLookupsAfter(ErrorCode.REQUEST_TIMED_OUT);
  assert.equal(commits, 2, 'the commit went again');
  assert.equal(after - before, 2, 'one lookup for the first commit, one more after REQUEST_TIMED_OUT');
});

it('TxnOffsetCommit answered COORDINATOR_LOAD_IN_PROGRESS retries the same coordinator', async () => {
  const { before, after, commits } = await groupLookupsAfter(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(commits, 2, 'the commit went again');
  assert.equal(after - before, 1, 'only the first commit looked the coordinator up');
});
