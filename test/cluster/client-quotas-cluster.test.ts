// Client quotas in a ZooKeeper cluster of three broker processes: a quota set through one broker is written where
// Kafka writes it (/config/clients/<id>, with a /config/changes notification) and every broker applies it; removed
// through another broker, it stops applying everywhere.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import { connectZooKeeper } from '../../src/controller/store/zookeeper-store.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { WireClient } from '../helpers/wire-client.js';

const PAYLOAD = buildBatch(Array.from({ length: 20 }, () => ({ value: 'x'.repeat(1000) })));

/** The throttle time broker `b` gives a producer of client id `clientId` after a few requests. */
async function throttleOn(b: BrokerProcess, clientId: string): Promise<number> {
  const client = await WireClient.connect(b.host, b.port, clientId);
  try {
    let throttleTimeMs = 0;
    for (let i = 0; i < 4 && throttleTimeMs === 0; i++) {
      // Recorded whether or not this broker leads the partition: the quota counts what the client sends.
      const r = await client.call(ApiKey.PRODUCE, 9, {
        transactionalId: null,
        acks: 1,
        timeoutMs: 5000,
        topicData: [{ name: 'cluster-quota', partitionData: [{ index: 0, records: PAYLOAD }] }],
      });
      throttleTimeMs = r.throttleTimeMs;
    }
    return throttleTimeMs;
  } finally {
    client.close();
  }
}

describe('client quotas in a ZooKeeper cluster', () => {
  let cluster: TestCluster;
  let store: CoordinationStore;

  before(async () => {
    cluster = await startCluster({ overrides: { 'quota.window.num': 2 } });
    const opened = await connectZooKeeper({ connect: cluster.zk.connect, sessionTimeoutMs: 6000 });
    assert.ok(opened.ok, 'connected to ZooKeeper');
    store = opened.value;
  });
  after(async () => {
    await store?.close();
    await cluster?.stop();
  });

  it('a quota set through one broker is stored as Kafka stores it and applies on all three', async () => {
    const [b0, b1, b2] = cluster.brokers as [BrokerProcess, BrokerProcess, BrokerProcess];
    const admin0 = new Admin({ bootstrapServers: b0.bootstrap, clientId: 'quota-admin' });
    try {
      for (const b of [b0, b1, b2]) assert.equal(await throttleOn(b, 'zk-slow'), 0, 'no quota yet');
      const [result] = await admin0.alterClientQuotas([
        { entity: { clientId: 'zk-slow' }, ops: [{ key: 'producer_byte_rate', value: 10000 }] },
        { entity: { user: 'bob', clientId: null }, ops: [{ key: 'consumer_byte_rate', value: 5000 }] },
      ]);
      assert.equal(result!.error, null);
      const node = await store.get('/config/clients/zk-slow');
      assert.ok(node.ok);
      assert.deepEqual(JSON.parse(Buffer.from(node.value.data).toString()), {
        version: 1,
        config: { producer_byte_rate: '10000' },
      });
      const userClient = await store.get('/config/users/bob/clients/<default>');
      assert.ok(userClient.ok, 'user/client-id entities live under /config/users/<user>/clients/');
      const changes = await store.children('/config/changes');
      assert.ok(changes.ok);
      const paths: string[] = [];
      for (const c of changes.value) {
        const n = await store.get(`/config/changes/${c}`);
        if (n.ok) paths.push(JSON.parse(Buffer.from(n.value.data).toString()).entity_path);
      }
      assert.ok(paths.includes('clients/zk-slow'), `notifications: ${paths.join(', ')}`);
      assert.ok(paths.includes('users/bob/clients/<default>'));
      for (const b of [b0, b1, b2]) {
        await waitFor(
          `broker ${b.brokerId} throttles zk-slow`,
          async () => ((await throttleOn(b, 'zk-slow')) > 0 ? true : undefined),
          10_000,
        );
      }
      // Removed through another broker: no broker throttles any more.
      const admin1 = new Admin({ bootstrapServers: b1.bootstrap, clientId: 'quota-admin' });
      try {
        await admin1.alterClientQuotas([
          { entity: { clientId: 'zk-slow' }, ops: [{ key: 'producer_byte_rate', value: null }] },
        ]);
      } finally {
        await admin1.close();
      }
      for (const b of [b0, b1, b2]) {
        await waitFor(
          `broker ${b.brokerId} lets zk-slow go`,
          async () => ((await throttleOn(b, 'zk-slow')) === 0 ? true : undefined),
          10_000,
        );
      }
    } finally {
      await admin0.close();
    }
  });
});
