// Self-healing and topic deletion in a real cluster: a ZooKeeper server and four broker processes. A broker is
// killed; once self-healing is moving its replicas (held back by the replication throttle), the topic is deleted.
// Its live replicas go at once and the dead broker's replica waits for it to return, so the topic's reassignments
// never finish: self-healing must count its moves of the topic as over, and take its throttle rates off the live
// brokers then, not leave them behind for as long as the broker stays gone.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { agreedController, waitFor, waitForInSync } from '../helpers/cluster.js';
import { preload, startThrottledHealingCluster, throttledBrokers } from '../helpers/self-healing-cluster.js';
import type { TestCluster } from '../helpers/test-cluster.js';

const PARTITIONS = 4;
/** Records of 50 kB: 1.2 MB a partition, which the 100 kB/s throttle takes seconds to copy. */
const PRELOADED = 96;

describe('self-healing of a topic deleted while its replicas move (four brokers, ZooKeeper)', () => {
  let cluster: TestCluster;
  let admin: Admin | undefined;

  before(async () => {
    cluster = await startThrottledHealingCluster(2);
  });
  after(async () => {
    await admin?.close();
    await cluster?.stop();
  });

  it('takes its throttles off once the moving topic is deleted, the failed broker still gone', async () => {
    const controllerId = await agreedController(cluster.brokers);
    admin = new Admin({
      bootstrapServers: cluster.brokers[controllerId]!.bootstrap,
      clientId: 'deletion-test',
    });
    const topic = 'doomed';
    const created = await admin.createTopics([{ topic, numPartitions: PARTITIONS, replicationFactor: 3 }]);
    assert.equal(created[0]!.error, null);
    await waitForInSync(admin, topic, PARTITIONS, 3);
    await preload(cluster, topic, PARTITIONS, PRELOADED);
    const victim = [0, 1, 2, 3].find((id) => id !== controllerId)!;
    const live = [0, 1, 2, 3].filter((id) => id !== victim);
    await cluster.brokers[victim]!.kill();
    await waitFor(
      'self-healing moving replicas off the broker',
      async () => ((await admin!.listPartitionReassignments()).length > 0 ? true : undefined),
      60_000,
    );
    assert.ok((await throttledBrokers(admin!, live)).length > 0, 'self-healing throttles the moves');
    const deleted = await admin.deleteTopics([topic]);
    assert.equal(deleted[0]!.error, null);
    await waitFor(
      'the throttle rates off the live brokers',
      async () => ((await throttledBrokers(admin!, live)).length === 0 ? true : undefined),
      20_000,
    );
    // The line follows the last write of the removal (the saved state after the configs), which the admin's read of
    // the configs can see before it: waited for, not read at once.
    await waitFor(
      'the removal logged',
      async () =>
        /self-healing: replication throttles removed/.test(cluster.brokers[controllerId]!.log())
          ? true
          : undefined,
      10_000,
    );

    // The broker returns: its replica is deleted, and the topic with it.
    await cluster.start(victim);
    await waitFor(
      'the deletion finished',
      async () =>
        cluster.brokers[controllerId]!.log().includes(`deleted topic ${topic}`) ? true : undefined,
      60_000,
    );
    assert.deepEqual(
      await throttledBrokers(admin!, live),
      [],
      'no throttle rate back once the broker returned',
    );
  });
});
