// A consumer beside a deposed leader: a broker cut off from ZooKeeper keeps leading its partitions in its own view,
// and its Metadata answers name itself the leader at the leader epoch it had (the controller elected another
// broker at a higher one). A consumer whose position already carries the newer epoch (it read from the new
// leader) and whose metadata then comes from that broker must not take the older epoch: taken, it validated its
// position there with OffsetsForLeaderEpoch, the deposed broker answered the newer epoch unknown (-1, -1), and
// auto.offset.reset moved the position (a chaos run lost a transaction's inputs that way). Kafka's client keeps
// the newer epoch (Metadata.updateLatestMetadata); so does Brook's (withNewestLeaderEpochs in the client's
// cluster.ts), and the consumer reads every record once, in order.
//
// Each broker has a second listener, CLIENT, that the consumer alone uses: it is advertised at a TCP proxy, so the
// test can cut the consumer off some brokers (and make its metadata come from the one it still reaches) while
// the brokers themselves still replicate and hear the controller on PLAINTEXT.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Consumer } from '../../src/client/consumer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { TcpProxy } from '../controller/store/tcp-proxy.js';
import { agreedController, agreedLeader, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { freePort } from '../helpers/zookeeper.js';

const TOPIC = 'deposed-metadata';
const tp = { topic: TOPIC, partition: 0 };
const BROKERS = 3;

describe('a consumer whose metadata comes from a deposed leader', () => {
  let cluster: TestCluster | undefined;
  /** Per broker, the proxy between ZooKeeper and the broker. */
  const zkProxies = new Map<number, TcpProxy>();
  /** Per broker, the proxy the broker's CLIENT listener is advertised at. */
  const clientProxies = new Map<number, TcpProxy>();

  before(async () => {
    const brokerOverrides: Record<number, Record<string, string>> = {};
    for (let id = 0; id < BROKERS; id++) {
      const plainPort = await freePort();
      const clientPort = await freePort();
      const proxy = await TcpProxy.start(clientPort);
      clientProxies.set(id, proxy);
      brokerOverrides[id] = {
        listeners: `PLAINTEXT://127.0.0.1:${plainPort},CLIENT://127.0.0.1:${clientPort}`,
        'advertised.listeners': `PLAINTEXT://127.0.0.1:${plainPort},CLIENT://127.0.0.1:${proxy.port}`,
        'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CLIENT:PLAINTEXT',
        'inter.broker.listener.name': 'PLAINTEXT',
      };
    }
    cluster = await startCluster({
      brokers: BROKERS,
      brokerZookeeperConnect: async (zk, id) => {
        const proxy = await TcpProxy.start(zk.port);
        zkProxies.set(id, proxy);
        return `127.0.0.1:${proxy.port}`;
      },
      overrides: { 'zookeeper.session.timeout.ms': 4000, 'min.insync.replicas': 2 },
      brokerOverrides,
    });
  });
  after(async () => {
    await cluster?.stop();
    for (const p of [...zkProxies.values(), ...clientProxies.values()]) await p.close();
  });

  it('keeps the newer leader epoch and reads every record once', async () => {
    const brokers = cluster!.brokers;
    const controller = await agreedController(brokers);
    // The deposed leader is not the controller, so that cutting it off ZooKeeper moves nothing but its leadership.
    const zombie = brokers.find((b) => b.brokerId !== controller)!;
    const others = brokers.filter((b) => b !== zombie);
    await createTopicOn(brokers[controller]!, TOPIC, {
      assignments: { 0: [zombie.brokerId, ...others.map((b) => b.brokerId)] },
    });
    const first = await agreedLeader(
      brokers,
      TOPIC,
      (v) => v.leaderId === zombie.brokerId && v.isrNodes.length === 3,
    );

    const consumer = new Consumer({
      bootstrapServers: [...clientProxies.values()].map((p) => `127.0.0.1:${p.port}`).join(','),
      autoOffsetReset: 'latest',
      fetchMaxWaitMs: 200,
      requestTimeoutMs: 5000,
      // Refreshed often, from whichever broker it picks: the deposed one answers with the older epoch.
      metadataMaxAgeMs: 500,
    });
    const got: string[] = [];
    let reading = true;
    const loop = (async () => {
      while (reading) {
        try {
          for (const r of await consumer.poll(100)) got.push(r.value!.toString());
        } catch {
          // A retriable error reported by poll(): poll again, as an application would.
        }
      }
    })();
    /** Waits until `count` records are read, or 20 s; the assertions after it tell what was read. */
    const readUntil = (count: number) =>
      waitFor(`${count} records read`, async () => (got.length >= count ? true : undefined)).catch(() => {});
    try {
      consumer.assign([tp]);
      consumer.seek(tp, 0);
      assert.deepEqual(await produceValues(zombie, TOPIC, ['a0', 'a1', 'a2']), [
        ErrorCode.NONE,
        ErrorCode.NONE,
        ErrorCode.NONE,
      ]);
      await readUntil(3);
      assert.deepEqual(got, ['a0', 'a1', 'a2']);

      zkProxies.get(zombie.brokerId)!.cut();
      const moved = await waitFor('a new leader elected at a higher epoch', async () => {
        const views = await Promise.all(others.map((b) => partitionView(b, TOPIC)));
        const [v] = views;
        if (v === undefined || v.leaderId < 0 || v.leaderId === zombie.brokerId) return undefined;
        const agreed = views.every((x) => x?.leaderId === v.leaderId && x.leaderEpoch === v.leaderEpoch);
        return agreed && v.leaderEpoch > first.leaderEpoch ? v : undefined;
      });
      const leader = brokers[moved.leaderId]!;
      await waitFor('b0 and b1 written at the new leader', async () => {
        const codes = await produceValues(leader, TOPIC, ['b0', 'b1']);
        return codes.every((c) => c === ErrorCode.NONE) ? true : undefined;
      });
      // The consumer, cut off the deposed broker, finds the new leader and reads from it at the new epoch.
      clientProxies.get(zombie.brokerId)!.cut();
      await readUntil(5);
      assert.deepEqual(got, ['a0', 'a1', 'a2', 'b0', 'b1'], 'read from the new leader');
      clientProxies.get(zombie.brokerId)!.restore();

      // Now it reaches the deposed broker alone: its metadata comes from there, naming the older epoch.
      const stale = await partitionView(zombie, TOPIC);
      assert.deepEqual([stale?.leaderId, stale?.leaderEpoch], [zombie.brokerId, first.leaderEpoch]);
      for (const b of others) clientProxies.get(b.brokerId)!.cut();
      const answered = consumer.cluster.metadataVersion;
      await waitFor('two Metadata answers of the deposed broker', async () =>
        consumer.cluster.metadataVersion >= answered + 2 ? true : undefined,
      );
      assert.deepEqual(await produceValues(leader, TOPIC, ['c0', 'c1']), [ErrorCode.NONE, ErrorCode.NONE]);
      // Time for a validation at the deposed broker and a reset by auto.offset.reset, had the epoch been taken.
      await new Promise((r) => setTimeout(r, 1000));
      for (const b of others) clientProxies.get(b.brokerId)!.restore();

      assert.deepEqual(await produceValues(leader, TOPIC, ['d0']), [ErrorCode.NONE]);
      const all = ['a0', 'a1', 'a2', 'b0', 'b1', 'c0', 'c1', 'd0'];
      await readUntil(all.length);
      // Let a duplicate arrive too, if one is coming.
      await new Promise((r) => setTimeout(r, 500));
      // Before the fix: a0 a1 a2 b0 b1 b0 b1 c0 c1 d0. The older epoch taken, the position (at the newer epoch) was
      // validated at the deposed broker, which answered the epoch unknown, and auto.offset.reset=latest moved it
      // to that broker's end, 3.
      assert.deepEqual(got, all, 'every record once, in order');
    } finally {
      reading = false;
      await loop;
      await consumer.close();
      zkProxies.get(zombie.brokerId)!.restore();
    }
  });
});
