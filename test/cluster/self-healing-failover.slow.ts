// Self-healing across a controller failover, in a real cluster: a ZooKeeper server and four broker processes. A
// broker is killed with SIGKILL; two thirds into brook.self.healing.broker.failure.timeout.ms the controller is
// killed too. The partitions (replication factor 2) have their replicas on the dead broker and one of the two
// others, never on the controller, so the two brokers left can hold them all. The new controller takes the
// failure time from /brook_self_healing: it moves the dead broker's replicas when the timeout counted from the
// broker's death ends, not a whole timeout after it took over, and every partition is back to two in-sync
// replicas on live brokers with no acknowledged record lost.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { agreedController, controllerOf, waitFor, waitForInSync } from '../helpers/cluster.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';

const FAILURE_TIMEOUT_MS = 30_000;
/** When the controller is killed, counted from the broker's death. */
const CONTROLLER_KILLED_AFTER_MS = 20_000;
const PARTITIONS = 4;

describe('self-healing across a controller failover (four brokers, ZooKeeper)', () => {
  let cluster: TestCluster;
  let admin: Admin | undefined;

  before(async () => {
    cluster = await startCluster({
      brokers: 4,
      overrides: {
        'zookeeper.session.timeout.ms': 6000,
        'min.insync.replicas': 1,
        'brook.self.healing.broker.failure.timeout.ms': FAILURE_TIMEOUT_MS,
        'auto.leader.rebalance.enable': false,
      },
    });
  });
  after(async () => {
    await admin?.close();
    await cluster?.stop();
  });

  it('the new controller heals when the timeout counted from the broker’s death ends', async () => {
    const firstController = await agreedController(cluster.brokers);
    const victim = [0, 1, 2, 3].find((id) => id !== firstController)!;
    const others = [0, 1, 2, 3].filter((id) => id !== victim && id !== firstController);
    const bootstrap = others.map((id) => cluster.brokers[id]!.bootstrap).join(',');
    admin = new Admin({ bootstrapServers: bootstrap, clientId: 'self-healing-failover-test' });
    const topic = 'healed-across-failover';
    const [o1, o2] = others as [number, number];
    const created = await admin.createTopics([
      { topic, replicaAssignment: { 0: [victim, o1], 1: [o1, victim], 2: [victim, o2], 3: [o2, victim] } },
    ]);
    assert.equal(created[0]!.error, null);
    const partitions = async () => (await admin!.describeTopics([topic]))[0]!.partitions;
    const inSync = await waitForInSync(admin, topic, PARTITIONS, 2);
    assert.ok(
      inSync.some((p) => p.replicas.includes(victim)),
      'the victim holds replicas',
    );

    const producer = new Producer({
      bootstrapServers: bootstrap,
      acks: -1,
      deliveryTimeoutMs: 120_000,
      requestTimeoutMs: 10_000,
    });
    const acked = new Set<string>();
    let running = true;
    const writing = (async () => {
      for (let n = 0; running; n++) {
        const value = `v-${n}`;
        try {
          await producer.send({ topic, key: Buffer.from(String(n)), value: Buffer.from(value) });
          acked.add(value);
        } catch {
          // not acknowledged: not counted
        }
      }
    })();
    let controllerKilledAt = 0;
    let newController = -1;
    try {
      await waitFor('writes acknowledged', async () => (acked.size >= 20 ? true : undefined));
      await cluster.brokers[victim]!.kill();
      const victimKilledAt = Date.now();
      const noted = await waitFor('the controller noting the broker gone', async () =>
        cluster.brokers[firstController]!.log().includes(`self-healing: broker ${victim} is gone`)
          ? Date.now()
          : undefined,
      );
      // The scenario's timeline, not a wait for a condition: the controller dies two thirds into the timeout.
      await new Promise((r) =>
        setTimeout(r, Math.max(0, victimKilledAt + CONTROLLER_KILLED_AFTER_MS - Date.now())),
      );
      await cluster.brokers[firstController]!.kill();
      controllerKilledAt = Date.now();
      newController = await waitFor(
        'another broker becoming controller',
        async () => {
          const id = await controllerOf(cluster.brokers[others[0]!]!);
          return id >= 0 && id !== firstController ? id : undefined;
        },
        30_000,
      );
      await waitFor(
        'every partition back to two in-sync replicas on live brokers',
        async () => {
          const ps = await partitions();
          return ps.length === PARTITIONS &&
            ps.every((p) => p.replicas.length === 2 && !p.replicas.includes(victim) && p.isr.length === 2)
            ? true
            : undefined;
        },
        120_000,
      );
      const log = cluster.brokers[newController]!.log();
      const takenOver = log.match(
        new RegExp(
          `self-healing: broker ${victim} has been gone (\\d+) ms \\(noted by an earlier controller\\)`,
        ),
      );
      assert.ok(takenOver !== null, `the new controller took the failure time over:\n${log}`);
      assert.ok(
        Number(takenOver[1]) >= controllerKilledAt - noted,
        `gone ${takenOver[1]} ms at the takeover, the controller was killed ${controllerKilledAt - noted} ms after it noted the broker`,
      );
      assert.match(log, new RegExp(`every replica of failed broker ${victim} has moved to live brokers`));
      // When the moves start, the new controller logs how long the broker had been gone. Counting from the
      // failure the first controller noted, that is about the timeout (30 s); a timeout restarted at the takeover
      // would make it at least the time gone at the takeover plus a whole timeout. The moves' own time (a throttled
      // catch-up of a log that grew meanwhile) depends on the machine and is not part of the bound.
      const moving = log.match(
        new RegExp(`self-healing: broker ${victim} has been gone (\\d+) ms \\(timeout \\d+ ms\\); moving`),
      );
      assert.ok(moving !== null, `the new controller moved the replicas:\n${log}`);
      const goneAtMove = Number(moving[1]);
      // (Less 100 ms: the logged times are rounded.)
      assert.ok(goneAtMove >= FAILURE_TIMEOUT_MS - 100, `moved after ${goneAtMove} ms, before the timeout`);
      assert.ok(
        goneAtMove < Number(takenOver[1]) + FAILURE_TIMEOUT_MS,
        `moved ${goneAtMove} ms after the failure, ${takenOver[1]} ms gone at the takeover: the timeout restarted`,
      );
    } finally {
      running = false;
      await writing;
      await producer.close();
    }

    const consumer = new Consumer({
      bootstrapServers: bootstrap,
      autoOffsetReset: 'earliest',
      clientId: 'reader',
    });
    const seen = new Set<string>();
    try {
      consumer.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition })));
      const deadline = Date.now() + 60_000;
      while (seen.size < acked.size && Date.now() < deadline) {
        for (const r of await consumer.poll(500)) seen.add(r.value!.toString());
      }
    } finally {
      await consumer.close();
    }
    const lost = [...acked].filter((v) => !seen.has(v));
    assert.deepEqual(lost, [], `${lost.length} of ${acked.size} acknowledged records not read back`);
  });
});
