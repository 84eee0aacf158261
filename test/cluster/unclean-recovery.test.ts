// An unclean leader election in a real cluster (ZooKeeper and three broker processes), and the leader recovery
// state of KIP-704: the only in-sync replica of a partition dies while the other replica is out of sync; the
// topic allows unclean election, so the out-of-sync replica leads, and the partition state in ZooKeeper says
// RECOVERING. A reassignment then adds a replica; when it joins the ISR the leader's AlterPartition says
// RECOVERED, and the state znode no longer carries leader_recovery_state.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import type { PartitionId } from '../../src/common/ids.js';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import { connectZooKeeper } from '../../src/controller/store/zookeeper-store.js';
import { decodePartitionState, partitionStatePath } from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { agreedController, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'unclean';

async function readValues(broker: BrokerProcess): Promise<string[]> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    return (await readPartition(client, TOPIC, 0)).map((r) => r.value!.toString());
  } finally {
    client.close();
  }
}

describe('an unclean leader election in a three-broker cluster', () => {
  let cluster: TestCluster | undefined;
  let store: CoordinationStore | null = null;
  let brokers: BrokerProcess[] = [];
  let admin: Admin;
  let controllerId = -1;

  async function partitionState() {
    const node = await store!.get(partitionStatePath(TOPIC, 0 as PartitionId));
    assert.ok(node.ok, 'the state znode exists');
    const decoded = decodePartitionState(node.value.data);
    assert.ok(decoded.ok);
    return decoded.value;
  }

  before(async () => {
    cluster = await startCluster({
      overrides: {
        // A follower is paused (SIGSTOP) for a few seconds; its session outlives that.
        'zookeeper.session.timeout.ms': 6000,
        'replica.lag.time.max.ms': 1000,
      },
    });
    brokers = cluster.brokers;
    admin = new Admin({ bootstrapServers: brokers.map((b) => b.bootstrap), clientId: 'unclean-test' });
    controllerId = await agreedController(brokers);
    const opened = await connectZooKeeper({ connect: cluster.zk.connect, sessionTimeoutMs: 4000 });
    assert.ok(opened.ok, 'connected to ZooKeeper');
    store = opened.value;
  });
  after(async () => {
    await admin?.close();
    await store?.close();
    await cluster?.stop();
  });

  it('makes an out-of-sync replica a RECOVERING leader, RECOVERED once its ISR grows', async () => {
    const [first, second] = [0, 1, 2].filter((id) => id !== controllerId) as [number, number];
    const created = await admin.createTopics([
      {
        topic: TOPIC,
        replicaAssignment: { 0: [first, second] },
        configs: { 'unclean.leader.election.enable': 'true' },
      },
    ]);
    assert.equal(created[0]!.error, null);
    await waitFor('a full ISR', async () => {
      const v = await partitionView(brokers[first]!, TOPIC);
      return v?.leaderId === first && v.isrNodes.length === 2 ? v : undefined;
    });
    assert.deepEqual(await produceValues(brokers[first]!, TOPIC, ['a', 'b']), [
      ErrorCode.NONE,
      ErrorCode.NONE,
    ]);

    process.kill(brokers[second]!.pid, 'SIGSTOP');
    try {
      // acks=all completes once the leader has dropped the silent follower from the ISR.
      assert.deepEqual(await produceValues(brokers[first]!, TOPIC, ['c']), [ErrorCode.NONE]);
      await waitFor('the ISR of the leader alone', async () => {
        const v = await partitionView(brokers[controllerId]!, TOPIC);
        return v?.isrNodes.length === 1 ? v : undefined;
      });
      await brokers[first]!.kill();
    } finally {
      process.kill(brokers[second]!.pid, 'SIGCONT');
    }

    const unclean = await waitFor('the out-of-sync replica to lead', async () => {
      const v = await partitionView(brokers[second]!, TOPIC);
      return v?.leaderId === second ? v : undefined;
    });
    assert.deepEqual(unclean.isrNodes, [second]);
    const recovering = await partitionState();
    assert.equal(recovering.leader, second);
    assert.equal(recovering.leaderRecoveryState, 1, 'RECOVERING after the unclean election');
    // 'c' may have reached the follower in the answer to a fetch it sent before it was paused; nothing else can.
    const kept = await readValues(brokers[second]!);
    assert.ok(['a,b', 'a,b,c'].includes(kept.join(',')), `the new leader holds ${kept.join(',')}`);

    const moved = await admin.alterPartitionReassignments([
      { topic: TOPIC, partition: 0, replicas: [second, controllerId] },
    ]);
    assert.deepEqual(moved, [{ topic: TOPIC, partition: 0, error: null }]);
    await waitFor(
      'the new replica in the ISR',
      async () => ((await admin.listPartitionReassignments()).length === 0 ? true : undefined),
      30_000,
    );
    const recovered = await partitionState();
    assert.equal(recovered.leaderRecoveryState, 0, 'RECOVERED once the ISR grew');
    assert.deepEqual([...recovered.isr].sort(), [second, controllerId].sort());
    assert.deepEqual(await produceValues(brokers[second]!, TOPIC, ['d']), [ErrorCode.NONE]);
    assert.deepEqual(await readValues(brokers[second]!), [...kept, 'd']);
  });
});
