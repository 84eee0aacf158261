// Fast failure detection: a partition led by a broker killed with kill -9 takes writes again within about a
// second with default settings (zookeeper.session.timeout.ms 18 s), because the controller's liveness probe finds
// the broker's listener refusing connections and fences it through ZooKeeper (deletes its registration) instead of
// waiting for its session to expire. Measured under a continuous acks=all load from Brook's producer: the time from
// the kill to the first acknowledgement after it; every acknowledged record is on the new leader.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Producer } from '../../src/client/index.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { agreedController, agreedLeader, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'fast-failover';
const CONTROLLER_TOPIC = 'fast-failover-controller';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
/** Generous: the goal is 2 s; a loaded test machine gets more. */
const RECOVERY_BOUND_MS = 5000;

describe('a leader killed with kill -9, default session timeout', () => {
  let cluster: TestCluster | undefined;

  before(async () => {
    // One broker after another: each gets the whole start timeout on a loaded machine.
    cluster = await startCluster({
      order: [0, 1, 2],
      overrides: { 'min.insync.replicas': 2, 'default.replication.factor': 3 },
    });
  });
  after(async () => {
    await cluster?.stop();
  });

  it('is fenced by the controller and its partition takes acks=all writes again within seconds', async () => {
    const brokers = cluster!.brokers;
    const controllerId = await agreedController(brokers);
    const leaderId = [0, 1, 2].find((id) => id !== controllerId)!;
    const others = [0, 1, 2].filter((id) => id !== leaderId);
    await createTopicOn(brokers[controllerId]!, TOPIC, {
      assignments: { 0: [leaderId, ...others] },
      configs: { 'min.insync.replicas': '2' },
    });
    await agreedLeader(brokers, TOPIC, (v) => v.leaderId === leaderId && v.isrNodes.length === 3);

    const survivors = others.map((id) => brokers[id]!);
    const { recoveryMs, acked } = await killUnderLoad(brokers[leaderId]!, survivors, TOPIC);
    console.log(`fast failure detection: first acks=all write ${recoveryMs} ms after kill -9 of the leader`);
    assert.ok(recoveryMs < RECOVERY_BOUND_MS, `writes resumed ${recoveryMs} ms after the kill`);
    // The controller fenced the broker through the store, not by its session's expiry.
    assert.match(
      brokers[controllerId]!.log(),
      new RegExp(`broker ${leaderId} \\(epoch \\d+\\) refuses connections: fenced`),
    );
    await assertNothingLost(brokers, survivors, TOPIC, leaderId, acked);
  });

  it('fences a killed controller that leads a partition as fast', async () => {
    const restarted = [0, 1, 2].find((id) => !isAlive(cluster!.brokers[id]!.pid));
    if (restarted !== undefined) await cluster!.start(restarted);
    const brokers = cluster!.brokers;
    const controllerId = await agreedController(brokers, 60_000);
    const others = [0, 1, 2].filter((id) => id !== controllerId);
    await createTopicOn(brokers[controllerId]!, CONTROLLER_TOPIC, {
      assignments: { 0: [controllerId, ...others] },
      configs: { 'min.insync.replicas': '2' },
    });
    await agreedLeader(
      brokers,
      CONTROLLER_TOPIC,
      (v) => v.leaderId === controllerId && v.isrNodes.length === 3,
    );
    const survivors = others.map((id) => brokers[id]!);
    const { recoveryMs, acked } = await killUnderLoad(brokers[controllerId]!, survivors, CONTROLLER_TOPIC);
    console.log(
      `fast failure detection: first acks=all write ${recoveryMs} ms after kill -9 of the controller leading it`,
    );
    assert.ok(recoveryMs < RECOVERY_BOUND_MS, `writes resumed ${recoveryMs} ms after the kill`);
    const fencedBy = survivors.filter((b) =>
      /controller broker \d+ refuses connections: fenced/.test(b.log()),
    );
    assert.ok(fencedBy.length > 0, 'no broker fenced the dead controller');
    await assertNothingLost(brokers, survivors, CONTROLLER_TOPIC, controllerId, acked);
  });
});

/**
 * Sends acks=all records one at a time to partition 0 of `topic` through `survivors`, kills `victim` with kill -9
 * once the load runs, and answers the time from the kill to the first acknowledgement after it and every value
 * acknowledged.
 */
async function killUnderLoad(
  victim: BrokerProcess,
  survivors: readonly BrokerProcess[],
  topic: string,
): Promise<{ recoveryMs: number; acked: string[] }> {
  const producer = new Producer({
    bootstrapServers: survivors.map((b) => b.bootstrap).join(','),
    acks: 'all',
    lingerMs: 0,
  });
  const acked: { value: string; atMs: number }[] = [];
  let running = true;
  let sent = 0;
  const load = (async () => {
    while (running) {
      const value = `v${sent++}`;
      await producer.send({ topic, partition: 0, value: Buffer.from(value) });
      acked.push({ value, atMs: Date.now() });
    }
  })();
  try {
    await waitFor('the load to be acknowledged', async () => (acked.length >= 20 ? true : undefined));
    const killedAtMs = Date.now();
    await victim.kill();
    await waitFor(
      'a write acknowledged after the kill',
      async () => (acked.some((a) => a.atMs > killedAtMs) ? true : undefined),
      60_000,
    );
    const recoveryMs = acked.find((a) => a.atMs > killedAtMs)!.atMs - killedAtMs;
    const before = acked.length;
    await waitFor(
      'more writes on the new leader',
      async () => (acked.length >= before + 20 ? true : undefined),
      30_000,
    );
    running = false;
    await load;
    return { recoveryMs, acked: acked.map((a) => a.value) };
  } finally {
    running = false;
    await load.catch(() => {});
    await producer.close();
  }
}

/** Every acknowledged value is on the leader the survivors agree on. */
async function assertNothingLost(
  brokers: readonly BrokerProcess[],
  survivors: readonly BrokerProcess[],
  topic: string,
  dead: number,
  acked: readonly string[],
): Promise<void> {
  const view = await agreedLeader(survivors, topic, (v) => v.leaderId !== dead);
  const client = await WireClient.connect(brokers[view.leaderId]!.host, brokers[view.leaderId]!.port);
  try {
    const present = new Set((await readPartition(client, topic, 0)).map((r) => r.value?.toString()));
    assert.deepEqual(
      acked.filter((v) => !present.has(v)),
      [],
      'acknowledged records missing on the new leader',
    );
  } finally {
    client.close();
  }
}
