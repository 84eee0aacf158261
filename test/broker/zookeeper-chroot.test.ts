// A zookeeper.connect with a chroot that does not exist yet (host:port/chroot) is created at startup, as Kafka's
// broker does (KafkaServer.initZkClient makes the chroot path before connecting under it); the broker then keeps
// all its znodes under the chroot. A connection lost while it does so is waited out, as Kafka's
// makeSurePersistentPathExists does (retryRequestUntilConnected).

import assert from 'node:assert/strict';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
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

/**
 * A proxy to ZooKeeper that passes the first connection's handshake and then cuts that connection at its first
 * request; every later connection passes untouched.
 */
async function cutFirstRequest(
  targetPort: number,
): Promise<{ port: number; cuts: () => number; close(): void }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  let cuts = 0;
  const server: Server = createServer((client) => {
    const first = connections++ === 0;
    const upstream = tcpConnect({ host: '127.0.0.1', port: targetPort });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    let chunks = 0;
    client.on('data', (chunk) => {
      // The first chunk is the connect request; the next is the first request of the session.
      if (first && chunks++ === 1) {
        cuts++;
        client.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
  });
  const port = await new Promise<number>((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
  });
  return {
    port,
    cuts: () => cuts,
    close() {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

describe('zookeeper.connect with a chroot, the connection lost at the first request', () => {
  let zk: TestZooKeeper;
  let proxy: Awaited<ReturnType<typeof cutFirstRequest>> | undefined;
  let broker: BrokerProcess | undefined;
  let root: CoordinationStore | undefined;
  before(async () => {
    zk = await startTestZooKeeper();
    proxy = await cutFirstRequest(zk.port);
  });
  after(async () => {
    await root?.close();
    await broker?.stop();
    proxy?.close();
    await zk?.stop();
  });

  it('is created once ZooKeeper answers again, and the broker starts under it', async () => {
    broker = await startBroker({
      overrides: { 'zookeeper.connect': `127.0.0.1:${proxy!.port}/brook/lossy` },
    });
    assert.equal(proxy!.cuts(), 1, 'the first request was cut');
    const session = await connectZooKeeper({ connect: zk.connect, sessionTimeoutMs: 6000 });
    assert.ok(session.ok);
    root = session.value;
    const ids = await root.children('/brook/lossy/brokers/ids');
    assert.ok(ids.ok, `no broker ids under the chroot: ${ids.ok ? '' : ids.code}`);
    assert.deepEqual(ids.value, ['0']);
  });
});
