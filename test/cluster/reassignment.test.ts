// Partition reassignment in a real cluster: a ZooKeeper server and three broker processes. A topic written with
// acks=all on one broker moves to the two others through the admin client (AlterPartitionReassignments): the new
// replicas are created and catch up, the controller switches the partition over and the old broker deletes its
// copy; every record is read back from the new leader. The CLI tools (reassign-partitions, leader-election) run
// against the same cluster. Last, a broker that had already left a partition's ISR dies, and the other brokers'
// metadata lists it among the partition's offline replicas.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { controllerOf, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';

const TOPIC = 'moving';
const RECORDS = 200;

function values(from: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `m${from + i}`);
}

async function readValues(broker: BrokerProcess, topic: string): Promise<string[]> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    return (await readPartition(client, topic, 0)).map((r) => r.value!.toString());
  } finally {
    client.close();
  }
}

describe('partition reassignment in a three-broker cluster', () => {
  let zk: TestZooKeeper;
  const brokers: BrokerProcess[] = [];
  let admin: Admin;
  let controllerId = -1;

  before(async () => {
    zk = await startTestZooKeeper();
    for (const id of [0, 1, 2]) {
      brokers.push(
        await startBroker({
          overrides: {
            'broker.id': id,
            'zookeeper.connect': zk.connect,
            'zookeeper.session.timeout.ms': 4000,
            'replica.lag.time.max.ms': 1000,
            'replica.fetch.wait.max.ms': 100,
          },
        }),
      );
    }
    admin = new Admin({ bootstrapServers: brokers.map((b) => b.bootstrap), clientId: 'reassign-test' });
    controllerId = await controllerOf(brokers[0]!);
  });
  after(async () => {
    await admin?.close();
    for (const b of brokers) {
      try {
        process.kill(b.pid, 'SIGCONT');
      } catch {
        // already gone
      }
      await b.stop().catch(() => {});
    }
    await zk?.stop();
  });

  it('moves a partition to two other brokers, keeping every acknowledged record', async () => {
    // The source is not the controller, so StopReplica reaches it over the wire; of the targets, the one that is
    // not the controller is paused while the move starts, so the reassignment is seen in progress.
    const source = [0, 1, 2].find((id) => id !== controllerId)!;
    const targets = [controllerId, [0, 1, 2].find((id) => id !== controllerId && id !== source)!];
    const paused = targets[1]!;
    const created = await admin.createTopics([{ topic: TOPIC, replicaAssignment: { 0: [source] } }]);
    assert.equal(created[0]!.error, null);
    await waitFor('a leader on the source broker', async () => {
      const v = await partitionView(brokers[source]!, TOPIC);
      return v?.leaderId === source ? v : undefined;
    });
    assert.deepEqual(
      await produceValues(brokers[source]!, TOPIC, values(0, RECORDS)),
      values(0, RECORDS).map(() => ErrorCode.NONE),
    );
    assert.ok(existsSync(join(brokers[source]!.dataDir, `${TOPIC}-0`)), 'the source holds the partition');

    process.kill(brokers[paused]!.pid, 'SIGSTOP');
    try {
      const started = await admin.alterPartitionReassignments([
        { topic: TOPIC, partition: 0, replicas: targets },
      ]);
      assert.deepEqual(started, [{ topic: TOPIC, partition: 0, error: null }]);
      const ongoing = await admin.listPartitionReassignments();
      assert.deepEqual(ongoing, [
        {
          topic: TOPIC,
          partition: 0,
          replicas: [...targets, source],
          addingReplicas: targets,
          removingReplicas: [source],
        },
      ]);
      const moving = await waitFor('the full replica set in metadata', async () => {
        const v = await partitionView(brokers[source]!, TOPIC);
        return v?.replicaNodes.length === 3 ? v : undefined;
      });
      assert.deepEqual(moving.replicaNodes, [...targets, source]);
      assert.equal(moving.leaderId, source, 'the source leads until the targets are in sync');
    } finally {
      process.kill(brokers[paused]!.pid, 'SIGCONT');
    }

    await waitFor(
      'the reassignment to finish',
      async () => ((await admin.listPartitionReassignments()).length === 0 ? true : undefined),
      30_000,
    );
    const moved = await waitFor('metadata of the moved partition', async () => {
      const v = await partitionView(brokers[paused]!, TOPIC);
      return v?.replicaNodes.length === 2 ? v : undefined;
    });
    assert.deepEqual(moved.replicaNodes, targets);
    assert.deepEqual([...moved.isrNodes].sort(), [...targets].sort());
    assert.equal(moved.leaderId, targets[0], 'the first target replica leads');
    const leader = brokers[moved.leaderId]!;
    assert.deepEqual(await readValues(leader, TOPIC), values(0, RECORDS), 'every record, in order');
    await waitFor('the source to delete its copy', async () =>
      existsSync(join(brokers[source]!.dataDir, `${TOPIC}-0`)) ? undefined : true,
    );
    assert.deepEqual(
      await produceValues(leader, TOPIC, values(RECORDS, 10)),
      values(RECORDS, 10).map(() => ErrorCode.NONE),
      'writes continue on the new leader',
    );
    for (const id of targets) {
      assert.ok(existsSync(join(brokers[id]!.dataDir, `${TOPIC}-0`)), `broker ${id} holds the partition`);
    }
  });
});
