// The controller over a real ZooKeeper whose reply to one transaction is lost: ZooKeeper commits the leader
// election the controller wrote, and the connection drops before the reply arrives (a ZooKeeper server crashing or
// losing its quorum leader right after the commit does this). The client answers CONNECTIONLOSS, reconnects within
// the session, and the controller's retry finds the state already changed. The new leader must still be told.

import assert from 'node:assert/strict';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { after, before, test } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import { registerBroker } from '../../src/controller/broker-registration.js';
import { Controller } from '../../src/controller/controller.js';
import { seededRandom } from '../../src/controller/random.js';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import { connectZooKeeper } from '../../src/controller/store/zookeeper-store.js';
import { TopicAdmin } from '../../src/controller/topic-admin.js';
import { decodePartitionState, partitionStatePath } from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { untilValue } from '../helpers/wait.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';
import { RecordingChannel, registration } from './helpers.js';

/** ZooKeeper's opcode of a multi (transaction) request. */
const OP_MULTI = 14;

/** Splits a stream of ZooKeeper's length-prefixed frames; the first frame of a connection is its handshake. */
class Frames {
  private buffered = Buffer.alloc(0);
  next(chunk: Buffer): Buffer[] {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    const out: Buffer[] = [];
    while (this.buffered.length >= 4) {
      const length = this.buffered.readInt32BE(0);
      if (this.buffered.length < 4 + length) break;
      out.push(this.buffered.subarray(0, 4 + length));
      this.buffered = this.buffered.subarray(4 + length);
    }
    return out;
  }
}

/**
 * A loopback proxy to ZooKeeper that, once armed, forwards the next multi request, swallows the server's reply to
 * it (matched by xid) and drops the connection. New connections go through as before.
 */
class ReplyDroppingProxy {
  armed = false;
  dropped = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<ReplyDroppingProxy> {
    let proxy: ReplyDroppingProxy | null = null;
    const server = createServer((client) => proxy!.accept(client, targetPort));
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        if (typeof address === 'object' && address !== null) resolve(address.port);
        else reject(new Error('no address'));
      });
    });
    proxy = new ReplyDroppingProxy(server, port);
    return proxy;
  }

  private accept(client: Socket, targetPort: number): void {
    const upstream = tcpConnect({ host: '127.0.0.1', port: targetPort });
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    let victimXid: number | null = null;
    let handshakeSent = false;
    const requests = new Frames();
    client.on('data', (chunk) => {
      for (const frame of requests.next(chunk)) {
        if (!handshakeSent) handshakeSent = true;
        else if (this.armed && frame.readInt32BE(8) === OP_MULTI) {
          this.armed = false;
          victimXid = frame.readInt32BE(4);
        }
        upstream.write(frame);
      }
    });
    let handshakeAnswered = false;
    const replies = new Frames();
    upstream.on('data', (chunk) => {
      for (const frame of replies.next(chunk)) {
        if (handshakeAnswered && victimXid !== null && frame.readInt32BE(4) === victimXid) {
          this.dropped++;
          client.destroy();
          upstream.destroy();
          return;
        }
        handshakeAnswered = true;
        client.write(frame);
      }
    });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let server: TestZooKeeper;
let proxy: ReplyDroppingProxy;
const sessions: CoordinationStore[] = [];
before(async () => {
  server = await startTestZooKeeper();
  proxy = await ReplyDroppingProxy.start(server.port);
});
after(async () => {
  for (const s of sessions) await s.close();
  await proxy?.close();
  await server?.stop();
});

async function session(connect = server.connect): Promise<CoordinationStore> {
  const opened = await connectZooKeeper({ connect, sessionTimeoutMs: 4000, connectionTimeoutMs: 10_000 });
  assert.ok(opened.ok, 'connected to ZooKeeper');
  sessions.push(opened.value);
  return opened.value;
}

test('on ZooKeeper, a leader elected by a transaction whose reply was lost is still sent LeaderAndIsr', async () => {
  // Broker 1 runs the controller and reaches ZooKeeper through the proxy; brokers 2 and 3 directly.
  const brokers = new Map<number, CoordinationStore>();
  for (const id of [1, 2, 3]) {
    const s = await session(id === 1 ? `127.0.0.1:${proxy.port}` : server.connect);
    assert.ok((await registerBroker(s, registration(id), seededRandom(id))).ok);
    brokers.set(id, s);
  }
  const channel = new RecordingChannel();
  const controller = new Controller({
    brokerId: 1 as BrokerId,
    store: brokers.get(1)!,
    channel,
    random: seededRandom(1),
  });
  await controller.start();
  assert.equal(controller.isActive, true);
  const observer = await session();
  const [created] = await new TopicAdmin({
    store: observer,
    defaults: { numPartitions: 1, replicationFactor: 3, deleteTopicEnable: true },
    random: seededRandom(9),
  }).createTopics(
    [
      {
        name: 'lost',
        numPartitions: -1,
        replicationFactor: -1,
        assignments: [{ partitionIndex: 0, brokerIds: [2, 3, 1] }],
        configs: {},
      },
    ],
    false,
  );
  assert.equal(created!.errorCode, ErrorCode.NONE);
  const readState = async () => {
    const node = await observer.get(partitionStatePath('lost', 0 as never));
    if (!node.ok) return null;
    const decoded = decodePartitionState(node.value.data);
    return decoded.ok ? decoded.value : null;
  };
  const initial = await untilValue('the partition state', readState);
  assert.equal(initial.leader, 2);
  await untilValue('LeaderAndIsr to broker 3', async () =>
    channel.lastLeaderAndIsr(3, 'lost', 0)?.leader === 2 ? true : null,
  );

  // The next transaction of the controller is its election for broker 2's partition: its reply is lost.
  proxy.armed = true;
  await brokers.get(2)!.close();
  const moved = await untilValue('a new leader in ZooKeeper', async () => {
    const s = await readState();
    return s !== null && s.leader === 3 ? s : null;
  });
  assert.equal(proxy.dropped, 1, 'the reply to the election was dropped');
  assert.equal(moved.leaderEpoch, 1);
  await controller.sync();
  await untilValue('LeaderAndIsr naming broker 3 leader, sent to broker 3', async () => {
    const sent = channel.lastLeaderAndIsr(3, 'lost', 0);
    return sent?.leader === 3 && sent.leaderEpoch === moved.leaderEpoch ? true : null;
  });
  await controller.stop();
});

test('on ZooKeeper, a reassignment whose transaction lost its reply goes on: the new replica learns it', async () => {
  // Broker 21 runs the controller through the proxy; 22, 23 and 24 register directly. (The brokers of the test
  // above may still be registered; they hold none of this topic.)
  const brokers = new Map<number, CoordinationStore>();
  for (const id of [21, 22, 23, 24]) {
    const s = await session(id === 21 ? `127.0.0.1:${proxy.port}` : server.connect);
    assert.ok((await registerBroker(s, registration(id), seededRandom(id))).ok);
    brokers.set(id, s);
  }
  const channel = new RecordingChannel();
  const controller = new Controller({
    brokerId: 21 as BrokerId,
    store: brokers.get(21)!,
    channel,
    random: seededRandom(21),
  });
  await controller.start();
  await untilValue('broker 21 is the controller', async () => (controller.isActive ? true : null));
  const observer = await session();
  const [created] = await new TopicAdmin({
    store: observer,
    defaults: { numPartitions: 1, replicationFactor: 2, deleteTopicEnable: true },
    random: seededRandom(29),
  }).createTopics(
    [
      {
        name: 'moving',
        numPartitions: -1,
        replicationFactor: -1,
        assignments: [{ partitionIndex: 0, brokerIds: [22, 23] }],
        configs: {},
      },
    ],
    false,
  );
  assert.equal(created!.errorCode, ErrorCode.NONE);
  await untilValue('LeaderAndIsr to broker 23', async () =>
    channel.lastLeaderAndIsr(23, 'moving', 0)?.leader === 22 ? true : null,
  );

  // The controller's next transaction writes the reassignment to [24, 23]: ZooKeeper commits it, the reply is lost.
  const droppedBefore = proxy.dropped;
  proxy.armed = true;
  const answer = await controller.alterPartitionReassignments({
    timeoutMs: 30_000,
    topics: [{ name: 'moving', partitions: [{ partitionIndex: 0, replicas: [24, 23] }] }],
  });
  assert.equal(proxy.dropped, droppedBefore + 1, 'the reply to the reassignment was dropped');
  assert.equal(answer.responses[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  const listed = await controller.listPartitionReassignments({ timeoutMs: 1000, topics: null });
  assert.deepEqual(listed.topics, [
    {
      name: 'moving',
      partitions: [
        { partitionIndex: 0, replicas: [24, 23, 22], addingReplicas: [24], removingReplicas: [22] },
      ],
    },
  ]);
  await controller.sync();
  const node = await observer.get(partitionStatePath('moving', 0 as never));
  assert.ok(node.ok);
  for (const b of [24, 22]) {
    const sent = channel.lastLeaderAndIsr(b, 'moving', 0);
    assert.equal(sent?.leaderEpoch, 1, `broker ${b} is sent the moving partition`);
    assert.equal(sent?.partitionEpoch, node.value.stat.version);
    assert.deepEqual(sent?.addingReplicas, [24]);
  }
  await controller.stop();
});
