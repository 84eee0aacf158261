import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import { readLiveBrokers, registerBroker } from '../../src/controller/broker-registration.js';
import { seededRandom } from '../../src/controller/random.js';
import {
  BROKER_IDS_PATH,
  brokerPath,
  CLUSTER_ID_PATH,
  decodeClusterId,
  isUuidString,
} from '../../src/controller/zk-layout/index.js';
import { registration, TestCluster } from './helpers.js';

test('the first broker creates the cluster id; later ones read it; the broker epoch is the czxid', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const s1 = cluster.store.openSession();
  const s2 = cluster.store.openSession();
  const first = await registerBroker(s1, registration(1, 'east'), seededRandom(1));
  const second = await registerBroker(s2, registration(2), seededRandom(2));
  assert.ok(first.ok && second.ok);
  assert.equal(first.value.clusterId, second.value.clusterId);
  assert.ok(isUuidString(first.value.clusterId));
  const node = await cluster.observer.get(CLUSTER_ID_PATH);
  assert.ok(node.ok);
  assert.deepEqual(decodeClusterId(node.value.data), { ok: true, value: first.value.clusterId });
  const reg = await cluster.observer.get(brokerPath(1 as BrokerId));
  assert.ok(reg.ok);
  assert.equal(first.value.brokerEpoch, reg.value.stat.czxid);
  assert.equal(reg.value.stat.ephemeralOwner, s1.sessionId);
  const live = await readLiveBrokers(cluster.observer);
  assert.ok(live.ok);
  assert.deepEqual([...live.brokers.keys()], [1, 2]);
  assert.equal(live.brokers.get(1 as BrokerId)?.registration.rack, 'east');
  assert.equal(live.brokers.get(2 as BrokerId)?.epoch, second.value.brokerEpoch);
});

test('a broker id held by another live session is refused; the same session may register again', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const s1 = cluster.store.openSession();
  const s2 = cluster.store.openSession();
  assert.ok((await registerBroker(s1, registration(1))).ok);
  const again = await registerBroker(s1, registration(1));
  assert.ok(again.ok, 'idempotent on its own session');
  const taken = await registerBroker(s2, registration(1));
  assert.ok(!taken.ok);
  assert.equal(taken.code, 'NODEEXISTS');
  assert.match(taken.reason, /already registered by another session/);
  // Once the holder's session ends, the id is free and the new registration has a newer epoch.
  cluster.store.expireSession(s1.sessionId);
  const now = await registerBroker(s2, registration(1));
  assert.ok(now.ok && again.ok && now.value.brokerEpoch > again.value.brokerEpoch);
});

test('a previous registration that expires between the create and the read leaves the id free: registered', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const s1 = cluster.store.openSession();
  const s2 = cluster.store.openSession();
  assert.ok((await registerBroker(s1, registration(1))).ok);
  // s2's create finds s1's node (NODEEXISTS); s1's session ends just before s2 reads the node to see its owner.
  let expired = false;
  const racing = new Proxy(s2, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key !== 'get') return typeof value === 'function' ? value.bind(target) : value;
      return (path: string, ...rest: unknown[]) => {
        if (path === brokerPath(1 as BrokerId) && !expired) {
          expired = true;
          cluster.store.expireSession(s1.sessionId);
        }
        return value.apply(target, [path, ...rest]);
      };
    },
  });
  const registered = await registerBroker(racing, registration(1));
  assert.ok(expired, 'the read came after the expiry');
  assert.ok(registered.ok, registered.ok ? '' : `${registered.reason} (${registered.code})`);
  const node = await cluster.observer.get(brokerPath(1 as BrokerId));
  assert.ok(node.ok);
  assert.equal(node.value.stat.ephemeralOwner, s2.sessionId);
});

test('a damaged registration is reported and the others are still read', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const s1 = cluster.store.openSession();
  assert.ok((await registerBroker(s1, registration(1))).ok);
  assert.ok(
    (await cluster.observer.create(`${BROKER_IDS_PATH}/7`, new TextEncoder().encode('not json'), 'ephemeral'))
      .ok,
  );
  const live = await readLiveBrokers(cluster.observer);
  assert.ok(live.ok);
  assert.deepEqual([...live.brokers.keys()], [1]);
  assert.equal(live.bad.length, 1);
  assert.match(live.bad[0]!, /^7: /);
});
