// A test cluster whose brokers each reach ZooKeeper through a TCP proxy of their own, so that a test can cut one
// broker alone off ZooKeeper (its session expires, the controller moves its partitions) while clients and the
// other brokers still reach it: the shape of a deposed leader or coordinator that nothing told it was deposed.

import { after, before } from 'node:test';
import { TcpProxy } from '../controller/store/tcp-proxy.js';
import type { BrokerProcess } from './broker-process.js';
import { type Overrides, startCluster, type TestCluster } from './test-cluster.js';

export interface ProxiedCluster {
  brokers(): BrokerProcess[];
  /** The proxy between broker `id` and ZooKeeper: cut() and restore() it. */
  proxy(id: number): TcpProxy;
}

/**
 * Starts the cluster in before() and stops it in after(), continuing any broker a test left stopped (SIGSTOP)
 * first, then closes the proxies.
 */
export function useZooKeeperProxiedCluster(overrides: Overrides): ProxiedCluster {
  let cluster: TestCluster | undefined;
  const proxies = new Map<number, TcpProxy>();
  before(async () => {
    cluster = await startCluster({
      brokerZookeeperConnect: async (zk, id) => {
        const proxy = await TcpProxy.start(zk.port);
        proxies.set(id, proxy);
        return `127.0.0.1:${proxy.port}`;
      },
      overrides,
    });
  });
  after(async () => {
    for (const b of cluster?.brokers ?? []) {
      try {
        process.kill(b.pid, 'SIGCONT');
      } catch {}
    }
    await cluster?.stop();
    for (const p of proxies.values()) await p.close();
  });
  return {
    brokers: () => cluster!.brokers,
    proxy: (id) => {
      const proxy = proxies.get(id);
      if (proxy === undefined) throw new Error(`no ZooKeeper proxy for broker ${id}`);
      return proxy;
    },
  };
}
