// An operator's cancel of a self-healing move, in a real cluster: a ZooKeeper server and four broker processes. A
// broker is killed; while self-healing moves its replicas (held back by the replication throttle), the operator
// cancels one move with AlterPartitionReassignments and no replicas, as kafka-reassign-partitions --cancel does.
// The controller's metrics count it as operator_cancelled, not finished; the partition's throttle entries come off
// at once (in the controller's next event, while the other moves still run); and once the other moves have
// finished, the cancelled partition still has its replica on the dead broker: self-healing left it where the
// operator put it.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { agreedController, waitFor, waitForInSync } from '../helpers/cluster.js';
import { preload } from '../helpers/self-healing-cluster.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { freePort } from '../helpers/zookeeper.js';
import { scrape } from '../metrics/scrape.js';

const PARTITIONS = 4;
/** Records of 50 kB: 1 MB a partition, which the 100 kB/s throttle takes seconds to copy. */
const PRELOADED = 80;

describe("an operator's cancel of a self-healing move (four brokers, ZooKeeper)", () => {
  let cluster: TestCluster | undefined;
  let admin: Admin | undefined;
  const ports: number[] = [];

  before(async () => {
    for (let id = 0; id < 4; id++) ports.push(await freePort());
    cluster = await startCluster({
      brokers: 4,
      overrides: {
        'zookeeper.session.timeout.ms': 6000,
        'min.insync.replicas': 2,
        'brook.self.healing.broker.failure.timeout.ms': 3000,
        'brook.self.healing.replication.throttled.rate': 100_000,
        'replication.quota.window.num': 2,
        'auto.leader.rebalance.enable': false,
      },
      brokerOverrides: Object.fromEntries(
        ports.map((port, id) => [id, { 'brook.metrics.listener': `http://127.0.0.1:${port}` }]),
      ),
    });
  });
  after(async () => {
    await admin?.close();
    await cluster?.stop();
  });

  it('counts operator_cancelled, takes its throttles off and does not move the partition again', async () => {
    const c = cluster!;
    const controllerId = await agreedController(c.brokers);
    admin = new Admin({ bootstrapServers: c.brokers[controllerId]!.bootstrap, clientId: 'cancel-test' });
    const topic = 'cancelled';
    const created = await admin.createTopics([{ topic, numPartitions: PARTITIONS, replicationFactor: 3 }]);
    assert.equal(created[0]!.error, null);
    await waitForInSync(admin, topic, PARTITIONS, 3);
    await preload(c, topic, PARTITIONS, PRELOADED);
    const victim = [0, 1, 2, 3].find((id) => id !== controllerId)!;
    await c.brokers[victim]!.kill();
    const moving = await waitFor(
      'self-healing moving replicas off the broker',
      async () => {
        const list = await admin!.listPartitionReassignments();
        return list.length > 1 ? list : undefined;
      },
      60_000,
    );
    const chosen = moving[0]!.partition;
    const [answer] = await admin.alterPartitionReassignments([{ topic, partition: chosen, replicas: null }]);
    assert.equal(answer!.error, null);

    const samples = await scrape(ports[controllerId]!);
    const outcome = (name: string) => samples.value('brook_controller_selfhealing_moves', { outcome: name });
    assert.deepEqual(
      [outcome('operator_cancelled'), outcome('finished'), outcome('cancelled')],
      [1, 0, 0],
      'operator_cancelled, finished, cancelled',
    );
    const throttled = async () => {
      const [r] = await admin!.describeConfigs([
        { type: 'topic', name: topic, keys: ['follower.replication.throttled.replicas'] },
      ]);
      const entry = r!.configs.find((e) => e.name === 'follower.replication.throttled.replicas');
      return entry?.source === 'DEFAULT_CONFIG' ? '' : (entry?.value ?? '');
    };
    // The cancel is answered once its reassignment znode is written; the controller takes the entries off in its
    // next event and every broker learns the topic's config from ZooKeeper after that. So "at once" is a short
    // wait, well inside the seconds the other moves need under the 100 kB/s throttle.
    let seen = '';
    const entries = await waitFor(
      `no throttle entry of the cancelled partition ${chosen}`,
      async () => {
        seen = await throttled();
        const list = seen.split(',').filter((e) => e.length > 0);
        return list.every((e) => !e.startsWith(`${chosen}:`)) ? list : undefined;
      },
      5_000,
    ).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}: ${seen}`);
    });
    assert.ok(entries.length > 0, 'the other moves keep their throttles');

    // The other moves finish; the cancelled partition keeps its replica on the dead broker, not moving.
    await waitFor(
      'no partition moving any more',
      async () => ((await admin!.listPartitionReassignments()).length === 0 ? true : undefined),
      120_000,
    );
    const [described] = await admin.describeTopics([topic]);
    const kept = described!.partitions.find((p) => p.partition === chosen)!;
    assert.ok(kept.replicas.includes(victim), `partition ${chosen} keeps its replica on broker ${victim}`);
    // The throttles come off after the last move ends (its completion is saved first): waited for, briefly.
    await waitFor(
      'every throttle off once the other moves ended',
      async () => ((await throttled()) === '' ? true : undefined),
      15_000,
    );
    const after = await scrape(ports[controllerId]!);
    assert.equal(after.value('brook_controller_selfhealing_moves', { outcome: 'operator_cancelled' }), 1);
  });
});
