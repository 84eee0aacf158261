import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CoordinationStore } from '../../../src/controller/store/store.js';
import { connectZooKeeper } from '../../../src/controller/store/zookeeper-store.js';
import {
  freePort,
  startTestZooKeeper,
  type TestZooKeeper,
  waitForSessionGone,
} from '../../helpers/zookeeper.js';
import { defineConformanceTests, type StoreHarness } from './conformance.js';
import { TcpProxy } from './tcp-proxy.js';

// One server for the whole file: starting a JVM is most of the time these tests take.
let server: TestZooKeeper;
before(async () => {
  server = await startTestZooKeeper();
});
after(async () => {
  await server?.stop();
});

describe('zookeeper store: conformance against a real ZooKeeper', () => {
  const proxies = new Map<CoordinationStore, TcpProxy>();
  const allProxies: TcpProxy[] = [];
  const runId = `/brook-conformance-${process.pid}`;
  let counter = 0;

  after(async () => {
    for (const p of allProxies) await p.close();
  });

  const harness: StoreHarness = {
    async open(sessionTimeoutMs) {
      // Each session goes through its own proxy, so a test can cut one session off and leave the others.
      const proxy = await TcpProxy.start(server.port);
      allProxies.push(proxy);
      const result = await connectZooKeeper({
        connect: `127.0.0.1:${proxy.port}`,
        sessionTimeoutMs: sessionTimeoutMs ?? 10_000,
        connectionTimeoutMs: 10_000,
      });
      if (!result.ok) assert.fail(`cannot connect: ${result.code}`);
      proxies.set(result.value, proxy);
      return result.value;
    },
    async disconnect(s) {
      proxies.get(s)!.cut();
    },
    async outwait(s) {
      // Expiry happens on the server's tick boundaries, later under load: wait out the timeout, then until the
      // server's own session list no longer has the session, so the test does not race the server.
      await new Promise((resolve) => setTimeout(resolve, s.sessionTimeoutMs));
      await waitForSessionGone(server.port, s.sessionId);
    },
    async reconnect(s) {
      proxies.get(s)!.restore();
    },
    freshPath: () => `${runId}-${++counter}`,
    eventWaitMs: 5_000,
  };
  defineConformanceTests(() => harness);
});

describe('zookeeper store: connecting', () => {
  it('answers CONNECTIONLOSS when no server listens', async () => {
    const port = await freePort();
    const started = Date.now();
    const result = await connectZooKeeper({ connect: `127.0.0.1:${port}`, connectionTimeoutMs: 500 });
    assert.equal(!result.ok && result.code, 'CONNECTIONLOSS');
    assert.ok(Date.now() - started < 3_000);
  });

  it('works under a chroot, as zookeeper.connect allows', async () => {
    const root = await connectZooKeeper({ connect: server.connect, connectionTimeoutMs: 5_000 });
    assert.ok(root.ok);
    assert.ok((await root.value.create('/chroot-test', new Uint8Array())).ok);
    const chrooted = await connectZooKeeper({
      connect: `${server.connect}/chroot-test`,
      connectionTimeoutMs: 5_000,
    });
    assert.ok(chrooted.ok);
    const created = await chrooted.value.create('/controller_epoch', new TextEncoder().encode('1'));
    assert.deepEqual(created, { ok: true, value: '/controller_epoch' });
    assert.ok((await root.value.exists('/chroot-test/controller_epoch')).ok);
    const seen = await root.value.get('/chroot-test/controller_epoch');
    assert.equal(seen.ok && new TextDecoder().decode(seen.value.data), '1');
    await chrooted.value.close();
    await root.value.close();
  });
});

describe('zookeeper store: connection loss', () => {
  it('answers CONNECTIONLOSS for a request that waits too long while cut off, and recovers after', async () => {
    const proxy = await TcpProxy.start(server.port);
    try {
      const result = await connectZooKeeper({
        connect: `127.0.0.1:${proxy.port}`,
        sessionTimeoutMs: 6_000,
        requestTimeoutMs: 300,
        connectionTimeoutMs: 10_000,
      });
      assert.ok(result.ok);
      const s = result.value;
      const events: string[] = [];
      s.onSessionEvent((e) => events.push(e));
      proxy.cut();
      const started = Date.now();
      const lost = await s.get('/');
      assert.equal(!lost.ok && lost.code, 'CONNECTIONLOSS');
      assert.ok(Date.now() - started < 2_000);
      proxy.restore();
      const deadline = Date.now() + 5_000;
      while (!events.includes('reconnected') && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(events, ['disconnected', 'reconnected']);
      assert.ok((await s.get('/')).ok);
      proxy.cut();
      const closing = Date.now();
      await s.close();
      assert.ok(Date.now() - closing < 3_000, 'close does not hang while cut off');
      const after = await s.get('/');
      assert.equal(!after.ok && after.code, 'SESSIONEXPIRED');
    } finally {
      await proxy.close();
    }
  });
});

describe('zookeeper store: a connection that goes silent (chaos finding F2)', () => {
  // ZooKeeper killed while the network dropped its packets: the client never hears the connection close.
  // node-zookeeper-client only pings when idle and never gives up on a silent server, so without a read
  // timeout of its own the session stays "connected" to nothing for good.
  async function silentFor(holdMs: number, sessionTimeoutMs: number) {
    const proxy = await TcpProxy.start(server.port);
    try {
      const result = await connectZooKeeper({
        connect: `127.0.0.1:${proxy.port}`,
        sessionTimeoutMs,
        connectionTimeoutMs: 10_000,
      });
      assert.ok(result.ok);
      const s = result.value;
      const events: string[] = [];
      s.onSessionEvent((e) => events.push(e));
      proxy.blackHole();
      await new Promise((r) => setTimeout(r, holdMs));
      proxy.restore();
      const deadline = Date.now() + 3 * sessionTimeoutMs;
      while (!events.includes('reconnected') && !events.includes('expired') && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      const outcome = [...events];
      await s.close();
      return outcome;
    } finally {
      await proxy.close();
    }
  }

  it('drops a connection that hears nothing and reconnects to the same session', async () => {
    // Restored at once: the client notices the silence after 2/3 of the session timeout and is back on the
    // same session before the server expires it.
    assert.deepEqual(await silentFor(0, 6_000), ['disconnected', 'reconnected']);
  });

  it('learns of the expiry when the silence outlasts the session', async () => {
    const events = await silentFor(5_000, 2_000);
    assert.deepEqual(events.slice(0, 2), ['disconnected', 'expired']);
  });
});
