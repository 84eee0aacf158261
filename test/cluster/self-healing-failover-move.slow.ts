// Self-healing across a controller failover in the middle of its moves, in a real cluster: a ZooKeeper server and
// four broker processes. The partitions (replication factor 2) are on broker V and broker O; the controller's
// broker holds many replicas of another topic, so self-healing moves V's replicas to the fourth broker T. The
// controller is killed while T copies (held back by the replication throttle): the new controller takes the moves
// over from /brook_self_healing, they finish, every partition is on two in-sync live replicas and the throttle
// rates self-healing set are taken off again.

import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { agreedController, waitFor } from '../helpers/cluster.js';
import {
  createOnVictimAndOther,
  startThrottledHealingCluster,
  throttledBrokers,
  waitForMovesTo,
  waitForTwoInSyncOn,
} from '../helpers/self-healing-cluster.js';
import type { TestCluster } from '../helpers/test-cluster.js';

const PARTITIONS = 4;
/** Records of 50 kB: 2 MB a partition, which the 100 kB/s throttle takes many seconds to copy. */
const PRELOADED = 160;

describe('self-healing across a controller failover mid-move (four brokers, ZooKeeper)', () => {
  let cluster: TestCluster;
  let admin: Admin | undefined;

  before(async () => {
    cluster = await startThrottledHealingCluster(1);
  });
  after(async () => {
    await admin?.close();
    await cluster?.stop();
  });

  it('the new controller finishes the moves and takes the throttles off', async () => {
    const c = await agreedController(cluster.brokers);
    admin = new Admin({ bootstrapServers: cluster.brokers[c]!.bootstrap, clientId: 'failover-move-test' });
    const topic = 'handed-over';
    const { v, o, t } = await createOnVictimAndOther(cluster, admin, c, topic, PARTITIONS, PRELOADED);
    await cluster.brokers[v]!.kill();
    await waitForMovesTo(admin, t);
    await cluster.brokers[c]!.kill();
    await admin.close();
    admin = new Admin({ bootstrapServers: cluster.brokers[o]!.bootstrap, clientId: 'failover-move-test' });
    await waitForTwoInSyncOn(admin, topic, PARTITIONS, [t, o]);
    await waitFor(
      'the throttle rates off the live brokers',
      async () => ((await throttledBrokers(admin!, [o, t])).length === 0 ? true : undefined),
      60_000,
    );
  });
});
