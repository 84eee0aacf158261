// Self-healing and an operator's own reassignment, in a real cluster: a ZooKeeper server and four broker
// processes. A broker is killed; while self-healing moves its replicas (held back by the replication throttle),
// an operator reassigns one of the moving partitions to a target of their own (another preferred leader). The
// failed broker then comes back: self-healing cancels the moves it still owns, but the operator's reassignment
// is theirs and must end where they asked, not be turned back to the replicas from before the failure.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { Admin } from '../../src/client/admin.js';
import { agreedController, waitFor, waitForInSync } from '../helpers/cluster.js';
import { preload, startThrottledHealingCluster } from '../helpers/self-healing-cluster.js';
import type { TestCluster } from '../helpers/test-cluster.js';

const PARTITIONS = 4;
/** Records of 50 kB: 2 MB a partition, which the 100 kB/s throttle takes many seconds to copy. */
const PRELOADED = 160;

describe("self-healing leaves an operator's reassignment alone (four brokers, ZooKeeper)", () => {
  let cluster: TestCluster;
  let admin: Admin | undefined;

  before(async () => {
    cluster = await startThrottledHealingCluster(2);
  });
  after(async () => {
    await admin?.close();
    await cluster?.stop();
  });

  it('a returning broker cancels only the moves self-healing still owns', async () => {
    const controllerId = await agreedController(cluster.brokers);
    admin = new Admin({
      bootstrapServers: cluster.brokers[controllerId]!.bootstrap,
      clientId: 'operator-test',
    });
    const topic = 'contested';
    const created = await admin.createTopics([{ topic, numPartitions: PARTITIONS, replicationFactor: 3 }]);
    assert.equal(created[0]!.error, null);
    await waitForInSync(admin, topic, PARTITIONS, 3);
    await preload(cluster, topic, PARTITIONS, PRELOADED);
    const victim = [0, 1, 2, 3].find((id) => id !== controllerId)!;
    await cluster.brokers[victim]!.kill();
    const moving = await waitFor(
      'self-healing moving replicas off the broker',
      async () => {
        const list = await admin!.listPartitionReassignments();
        return list.length > 0 ? list : undefined;
      },
      60_000,
    );
    // The operator wants the new replica as the preferred leader: the same brokers as self-healing's target, in
    // another order (reversed when self-healing's target already leads with it).
    const chosen = moving[0]!;
    const healing = chosen.replicas.filter((r) => !chosen.removingReplicas.includes(r));
    const addingFirst = [
      ...chosen.addingReplicas,
      ...healing.filter((r) => !chosen.addingReplicas.includes(r)),
    ];
    const mine = isDeepStrictEqual(addingFirst, healing) ? [...healing].reverse() : addingFirst;
    assert.notDeepEqual(mine, healing);
    const [answer] = await admin.alterPartitionReassignments([
      { topic, partition: chosen.partition, replicas: mine },
    ]);
    assert.equal(answer!.error, null);
    const [still] = await admin.listPartitionReassignments([{ topic, partition: chosen.partition }]);
    assert.ok(still !== undefined, "the operator's reassignment is still running when the broker returns");

    await cluster.start(victim);
    await waitFor(
      'no partition moving any more',
      async () => ((await admin!.listPartitionReassignments()).length === 0 ? true : undefined),
      120_000,
    );
    // The broker answering may learn the last step a moment after the reassignment's end: its metadata is
    // read again until it shows the operator's replicas or the time runs out.
    const replicasNow = async () => {
      const [described] = await admin!.describeTopics([topic]);
      return described!.partitions.find((p) => p.partition === chosen.partition)!.replicas;
    };
    await waitFor(
      "the operator's replicas in the metadata",
      async () => (isDeepStrictEqual(await replicasNow(), mine) ? true : undefined),
      15_000,
    ).catch(() => undefined);
    assert.deepEqual(await replicasNow(), mine, "the partition ends on the operator's replicas");
  });
});
