// Self-healing when the broker taking a failed broker's replicas fails too, in a real cluster: a ZooKeeper server
// and four broker processes. The partitions (replication factor 2) are on broker V and broker O; the controller's
// broker holds many replicas of another topic, so self-healing moves V's replicas to the fourth broker T. T is
// killed while it copies (held back by the replication throttle): those moves could finish only once T returned.
// Once T has been gone the timeout too, self-healing must move the replicas again, to the controller's broker,
// and every partition must be back to two in-sync replicas on live brokers.

import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { agreedController } from '../helpers/cluster.js';
import {
  createOnVictimAndOther,
  startThrottledHealingCluster,
  waitForMovesTo,
  waitForTwoInSyncOn,
} from '../helpers/self-healing-cluster.js';
import type { TestCluster } from '../helpers/test-cluster.js';

const PARTITIONS = 4;
/** Records of 50 kB: 2 MB a partition, which the 100 kB/s throttle takes many seconds to copy. */
const PRELOADED = 160;

describe('self-healing when the broker taking the replicas fails too (four brokers, ZooKeeper)', () => {
  let cluster: TestCluster;
  let admin: Admin | undefined;

  before(async () => {
    cluster = await startThrottledHealingCluster(1);
  });
  after(async () => {
    await admin?.close();
    await cluster?.stop();
  });

  it('moves the replicas again once the new broker has been gone the timeout', async () => {
    const c = await agreedController(cluster.brokers);
    admin = new Admin({ bootstrapServers: cluster.brokers[c]!.bootstrap, clientId: 'target-lost-test' });
    const topic = 'twice';
    const { v, o, t } = await createOnVictimAndOther(cluster, admin, c, topic, PARTITIONS, PRELOADED);
    await cluster.brokers[v]!.kill();
    await waitForMovesTo(admin, t);
    await cluster.brokers[t]!.kill();
    await waitForTwoInSyncOn(admin, topic, PARTITIONS, [c, o]);
  });
});
