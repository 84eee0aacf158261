// AlterPartitionReassignments and ListPartitionReassignments as @platformatic/kafka encodes and decodes them: its
// Admin class has no methods for them, but the package exports the version 0 codecs, which run here on its own
// Connection against a Brook broker. Per-partition errors reach it as a ResponseError carrying the response.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  Admin,
  alterPartitionReassignmentsV0,
  Connection,
  listPartitionReassignmentsV0,
} from '@platformatic/kafka';
import { ErrorCode } from '../../src/protocol/errors.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';

const TOPIC = 'plt-reassign';

describe('@platformatic/kafka partition reassignment codecs against a Brook broker', () => {
  let broker: BrokerProcess;
  let connection: Connection;

  /** The partition error codes of an AlterPartitionReassignments call, whether it resolved or was rejected. */
  async function alter(replicas: number[] | null): Promise<number[]> {
    const topics = [{ name: TOPIC, partitions: [{ partitionIndex: 0, replicas: replicas as number[] }] }];
    let response: { errorCode: number; responses: { partitions: { errorCode: number }[] }[] };
    try {
      response = await alterPartitionReassignmentsV0.api.async(connection, 5000, false, topics);
    } catch (e) {
      response = (e as { response?: typeof response }).response!;
      assert.ok(response !== undefined, `no response in ${String(e)}`);
    }
    assert.equal(response.errorCode, ErrorCode.NONE);
    return response.responses.flatMap((t) => t.partitions.map((p) => p.errorCode));
  }

  before(async () => {
    broker = await startBroker();
    const admin = new Admin({ clientId: 'brook-compat', bootstrapBrokers: [broker.bootstrap] });
    try {
      await admin.createTopics({ topics: [TOPIC], partitions: 1, replicas: 1 });
    } finally {
      await admin.close();
    }
    connection = new Connection('brook-compat-reassign');
    await connection.connect(broker.host, broker.port);
  });
  after(async () => {
    await connection?.close();
    await broker?.stop();
  });

  it('lists no reassignment in progress', async () => {
    const listed = await listPartitionReassignmentsV0.api.async(connection, 5000, [
      { name: TOPIC, partitionIndexes: [0] },
    ]);
    assert.equal(listed.errorCode, ErrorCode.NONE);
    assert.deepEqual(listed.topics, []);
  });

  it('accepts the current replicas and refuses a dead broker and a cancel with nothing to cancel', async () => {
    assert.deepEqual(await alter([0]), [ErrorCode.NONE]);
    assert.deepEqual(await alter([0, 9]), [ErrorCode.INVALID_REPLICA_ASSIGNMENT]);
    assert.deepEqual(await alter(null), [ErrorCode.NO_REASSIGNMENT_IN_PROGRESS]);
  });
});
