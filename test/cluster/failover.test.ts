// A real cluster: a ZooKeeper server and three broker processes. A replicated topic is written with acks=all,
// its leader is killed with SIGKILL, and every acknowledged record is read back from the new leader, in order,
// after the controller moved leadership; writes continue on the new leader.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { controllerOf, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';

const TOPIC = 'replicated';

async function produce(broker: BrokerProcess, from: number, count: number): Promise<void> {
  const values = Array.from({ length: count }, (_, i) => `v${from + i}`);
  const codes = await produceValues(broker, TOPIC, values);
  assert.deepEqual(
    codes,
    values.map(() => ErrorCode.NONE),
    'every record acknowledged by all in-sync replicas',
  );
}

describe('a three-broker cluster on ZooKeeper', () => {
  let zk: TestZooKeeper;
  const brokers: BrokerProcess[] = [];
  const dead = new Set<BrokerProcess>();

  before(async () => {
    zk = await startTestZooKeeper();
    for (const id of [0, 1, 2]) {
      brokers.push(
        await startBroker({
          overrides: {
            'broker.id': id,
            'zookeeper.connect': zk.connect,
            'zookeeper.session.timeout.ms': 6000,
            'default.replication.factor': 3,
            'min.insync.replicas': 2,
            'replica.fetch.wait.max.ms': 100,
          },
        }),
      );
    }
  });
  after(async () => {
    for (const b of brokers) await b.stop().catch(() => {});
    await zk?.stop();
  });

  it('replicates acks=all writes and keeps every one of them when the leader is killed', async () => {
    const admin = await WireClient.connect(brokers[1]!.host, brokers[1]!.port);
    try {
      const created = await admin.call(ApiKey.CREATE_TOPICS, 5, {
        topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 3, assignments: [], configs: [] }],
        timeoutMs: 10_000,
        validateOnly: false,
      });
      assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
    } finally {
      admin.close();
    }
    const first = await waitFor('leader with a full ISR', async () => {
      const view = await partitionView(brokers[0]!, TOPIC);
      return view !== undefined && view.leaderId >= 0 && view.isrNodes.length === 3 ? view : undefined;
    });
    const leader = brokers[first.leaderId]!;
    await produce(leader, 0, 40);

    await leader.kill();
    dead.add(leader);
    const survivors = brokers.filter((b) => b !== leader);
    const second = await waitFor('a new leader', async () => {
      const view = await partitionView(survivors[0]!, TOPIC);
      return view !== undefined && view.leaderId >= 0 && view.leaderId !== first.leaderId ? view : undefined;
    });
    assert.ok(second.leaderEpoch > first.leaderEpoch, 'the new leader has a higher leader epoch');
    assert.ok(!second.isrNodes.includes(first.leaderId), 'the dead broker left the ISR');
    const newLeader = brokers[second.leaderId]!;
    await produce(newLeader, 40, 10);

    const client = await WireClient.connect(newLeader.host, newLeader.port);
    try {
      const values = (await readPartition(client, TOPIC, 0)).map((r) => r.value!.toString());
      assert.deepEqual(
        values,
        Array.from({ length: 50 }, (_, i) => `v${i}`),
      );
    } finally {
      client.close();
    }
  });

  it('elects a new controller when the controller is killed, and it serves topic changes', async () => {
    const alive = brokers.filter((b) => !dead.has(b));
    const controllerId = await controllerOf(alive[0]!);
    const controller = brokers[controllerId]!;
    await controller.kill();
    const survivor = alive.find((b) => b !== controller)!;
    const next = await waitFor('a new controller', async () => {
      const id = await controllerOf(survivor);
      return id >= 0 && id !== controllerId ? id : undefined;
    });
    assert.notEqual(next, controllerId);
    const admin = await WireClient.connect(survivor.host, survivor.port);
    try {
      const created = await admin.call(ApiKey.CREATE_TOPICS, 5, {
        topics: [
          { name: 'after-failover', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] },
        ],
        timeoutMs: 10_000,
        validateOnly: false,
      });
      assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
    } finally {
      admin.close();
    }
    const view = await waitFor('the new topic with a leader', async () => {
      const v = await partitionView(survivor, 'after-failover');
      return v !== undefined && v.leaderId >= 0 ? v : undefined;
    });
    assert.ok(view.leaderId !== controllerId, 'led by a live broker');
  });
});
