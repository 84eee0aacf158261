// ZooKeeper killed with kill -9 and started again on its data (chaos finding F2): every broker must get a
// working session back (the same one, if the client reconnects before the server expires it, or a new one
// after expiry, followed by a new registration), the cluster must have one controller, every partition its
// full ISR again, and an acks=all write must succeed. Once for a restart well within the brokers' session
// timeout and once for one well past it; and once while the network drops every packet of the brokers'
// connections to ZooKeeper, so that they never hear those connections close (what the chaos harness's
// partitions did: a client that waits for the close waits for good).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectZooKeeper } from '../../src/controller/store/zookeeper-store.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { TcpProxy } from '../controller/store/tcp-proxy.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { agreedController, partitionView, produceToLeader, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';

const SESSION_TIMEOUT_MS = 4000;
/** How long the cluster has to recover once ZooKeeper serves again. */
const RECOVERY_MS = 30_000;

/** The ids in /brokers/ids, if /controller exists too (else none: the cluster cannot change its ISRs). */
async function registeredIds(connect: string): Promise<string[]> {
  const opened = await connectZooKeeper({ connect, sessionTimeoutMs: 4000, connectionTimeoutMs: 3000 });
  if (!opened.ok) throw new Error(`cannot reach ZooKeeper: ${opened.code}`);
  try {
    const ids = await opened.value.children('/brokers/ids');
    if (!ids.ok) throw new Error(`reading /brokers/ids failed: ${ids.code}`);
    const controller = await opened.value.exists('/controller');
    return controller.ok && controller.value !== null ? ids.value : [];
  } finally {
    await opened.value.close();
  }
}

async function fullIsr(brokers: readonly BrokerProcess[], topic: string): Promise<boolean> {
  for (const b of brokers) {
    const v = await partitionView(b, topic);
    if (v === undefined || v.leaderId < 0 || v.isrNodes.length !== 3) return false;
  }
  return true;
}

const cases = [
  { downMs: 2000, silent: false },
  { downMs: 8000, silent: false },
  { downMs: 2000, silent: true },
];

for (const { downMs, silent } of cases) {
  const how = silent ? ', the old connections silent' : '';
  describe(`ZooKeeper killed (-9) and restarted after ${downMs} ms (session timeout ${SESSION_TIMEOUT_MS} ms${how})`, () => {
    let cluster: TestCluster | undefined;
    let proxy: TcpProxy | undefined;
    const topic = `zk-restart-${downMs}${silent ? '-silent' : ''}`;

    before(async () => {
      cluster = await startCluster({
        zookeeperConnect: async (zk) => {
          proxy = await TcpProxy.start(zk.port);
          return `127.0.0.1:${proxy.port}`;
        },
        overrides: {
          'zookeeper.session.timeout.ms': SESSION_TIMEOUT_MS,
          'replica.lag.time.max.ms': 2000,
          'min.insync.replicas': 2,
        },
      });
      await createTopicOn(cluster.brokers[0]!, topic, { numPartitions: 1, replicationFactor: 3 });
      await waitFor('a full ISR', async () => ((await fullIsr(cluster!.brokers, topic)) ? true : undefined));
    });
    after(async () => {
      await cluster?.stop();
      await proxy?.close();
    });

    it('every broker registers, one controller, full ISR, acks=all write succeeds', async () => {
      const { zk, brokers } = cluster!;
      if (silent) proxy!.blackHole();
      await zk.kill();
      await new Promise((r) => setTimeout(r, downMs));
      await zk.restart();
      proxy!.restore();
      const restarted = Date.now();
      // The server restores the sessions it had and gives each its timeout again from its start: wait that
      // out, so that what is checked below is what came after (stale sessions expired, their nodes gone),
      // not what was left from before the kill.
      await new Promise((r) => setTimeout(r, SESSION_TIMEOUT_MS + 2000));
      try {
        await waitFor(
          'every broker registered in /brokers/ids',
          async () => ((await registeredIds(zk.connect)).length === 3 ? true : undefined),
          RECOVERY_MS,
        );
        const controller = await agreedController(brokers);
        assert.ok(controller >= 0);
        await waitFor(
          'the ISR back to 3 on every broker',
          async () => ((await fullIsr(brokers, topic)) ? true : undefined),
          RECOVERY_MS,
        );
        assert.deepEqual(await produceToLeader(brokers, topic, ['after-restart']), [ErrorCode.NONE]);
      } catch (e) {
        const logs = brokers.map((b) => `--- broker ${b.brokerId}\n${b.log().slice(-3000)}`).join('\n');
        throw new Error(`${(e as Error).message} (${Date.now() - restarted} ms after the restart)\n${logs}`);
      }
    });
  });
}
