// A zookeeper.connect with a chroot that does not exist yet (host:port/chroot) is created at startup, as Kafka's
// broker does (KafkaServer.initZkClient makes the chroot path before connecting under it); the broker then keeps
// all its znodes under the chroot.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CoordinationStore, connectZooKeeper } from '../../src/controller/store/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';

describe('zookeeper.connect with a chroot that does not exist yet', () => {
  let zk: TestZooKeeper;
  let broker: BrokerProcess | undefined;
  let root: CoordinationStore | undefined;
  before(async () => {
    zk = await startTestZooKeeper();
  });
  after(async () => {
    await root?.close();
    await broker?.stop();
    await zk?.stop();
  });

  it('is created with its parents, and the broker registers under it', async () => {
    broker = await startBroker({ overrides: { 'zookeeper.connect': `${zk.connect}/brook/cluster-a` } });
    const session = await connectZooKeeper({ connect: zk.connect, sessionTimeoutMs: 6000 });
    assert.ok(session.ok);
    root = session.value;
    const ids = await root.children('/brook/cluster-a/brokers/ids');
    assert.ok(ids.ok, `no broker ids under the chroot: ${ids.ok ? '' : ids.code}`);
    assert.deepEqual(ids.value, ['0']);
    const outside = await root.exists('/brokers');
    assert.ok(outside.ok);
    assert.equal(outside.value, null, 'nothing is written outside the chroot');
  });
});
