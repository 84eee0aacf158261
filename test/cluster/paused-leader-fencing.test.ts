// Fast failure detection must not trade safety for speed. A paused leader (SIGSTOP: a long GC pause, a frozen VM)
// still has its listening socket, whose connections the kernel accepts, so the controller's liveness probe does not
// take it for dead: it keeps its partition until its ZooKeeper session expires, as before. Once replaced, the
// paused broker that resumes cannot acknowledge an acks=all write as leader at its old epoch, and the records the
// new leader acknowledged stay.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { agreedController, agreedLeader, partitionView, produceValues } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'paused-leader';
const SESSION_TIMEOUT_MS = 4000;

async function values(broker: BrokerProcess): Promise<string[]> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    return (await readPartition(client, TOPIC, 0)).map((r) => r.value?.toString() ?? '');
  } finally {
    client.close();
  }
}

describe('a paused leader', () => {
  let cluster: TestCluster | undefined;
  let paused: BrokerProcess | undefined;

  before(async () => {
    // One broker after another: each gets the whole start timeout on a loaded machine.
    cluster = await startCluster({
      order: [0, 1, 2],
      overrides: { 'zookeeper.session.timeout.ms': SESSION_TIMEOUT_MS, 'min.insync.replicas': 2 },
    });
  });
  after(async () => {
    if (paused !== undefined) process.kill(paused.pid, 'SIGCONT');
    await cluster?.stop();
  });

  it('is not fenced by the liveness probe, and after its session expired cannot acknowledge writes', async () => {
    const brokers = cluster!.brokers;
    const controllerId = await agreedController(brokers);
    const leaderId = [0, 1, 2].find((id) => id !== controllerId)!;
    const others = [0, 1, 2].filter((id) => id !== leaderId);
    await createTopicOn(brokers[controllerId]!, TOPIC, {
      assignments: { 0: [leaderId, ...others] },
      configs: { 'min.insync.replicas': '2' },
    });
    const first = await agreedLeader(
      brokers,
      TOPIC,
      (v) => v.leaderId === leaderId && v.isrNodes.length === 3,
    );
    assert.deepEqual(await produceValues(brokers[leaderId]!, TOPIC, ['a', 'b', 'c']), [0, 0, 0]);

    const leader = brokers[leaderId]!;
    const survivors = others.map((id) => brokers[id]!);
    process.kill(leader.pid, 'SIGSTOP');
    paused = leader;
    const pausedAtMs = Date.now();
    // Within the session timeout the probe alone changes nothing: connections to the paused broker are accepted.
    await new Promise((r) => setTimeout(r, SESSION_TIMEOUT_MS / 2));
    if (Date.now() - pausedAtMs < SESSION_TIMEOUT_MS * 0.9) {
      const view = await partitionView(brokers[controllerId]!, TOPIC);
      assert.equal(view?.leaderId, leaderId, 'a paused broker was fenced before its session expired');
      assert.equal(view?.leaderEpoch, first.leaderEpoch);
    }
    assert.doesNotMatch(brokers[controllerId]!.log(), /refuses connections: fenced/);

    // The session expires: a new leader, which takes writes.
    const moved = await agreedLeader(survivors, TOPIC, (v) => v.leaderId !== leaderId, 30_000);
    assert.ok(moved.leaderEpoch > first.leaderEpoch);
    assert.deepEqual(await produceValues(brokers[moved.leaderId]!, TOPIC, ['d']), [0]);

    // The old leader resumes: a write sent straight to it is never acknowledged.
    process.kill(leader.pid, 'SIGCONT');
    paused = undefined;
    const codes = await produceValues(leader, TOPIC, ['zombie']).catch(() => [-1]);
    assert.notDeepEqual(codes, [0], 'the resumed old leader acknowledged an acks=all write');

    // The new leader's log holds every acknowledged record and nothing the old leader took in.
    const onLeader = await values(brokers[moved.leaderId]!);
    assert.deepEqual(
      onLeader.filter((v) => v !== 'zombie'),
      ['a', 'b', 'c', 'd'],
    );
    assert.ok(!onLeader.includes('zombie'), 'the old leader write reached the new leader');
    // The resumed broker rejoins the ISR as a follower (having dropped what it took in at its old epoch).
    await agreedLeader(
      survivors,
      TOPIC,
      (v) => v.leaderId === moved.leaderId && v.isrNodes.includes(leaderId),
      30_000,
    );
  });
});
