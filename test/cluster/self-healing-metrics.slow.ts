// The metrics of self-healing, scraped over HTTP from real brokers (three broker processes, ZooKeeper): a broker
// killed with SIGKILL shows on the controller as a failed broker waiting, and its partitions (replication factor 2,
// min.insync.replicas 2) as under min ISR on their leaders; once the timeout has passed and the moves finished,
// the failed broker no longer counts as waiting or healing, every move started is counted finished, nothing is
// moving, nothing is under min ISR or offline, and the controller's log says why it moved what.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { agreedController, waitFor, waitForInSync } from '../helpers/cluster.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { freePort } from '../helpers/zookeeper.js';
import { type Samples, scrape } from '../metrics/scrape.js';

const FAILURE_TIMEOUT_MS = 5000;
const PARTITIONS = 3;

describe('self-healing metrics (three brokers, ZooKeeper)', () => {
  let cluster: TestCluster | undefined;
  let admin: Admin | undefined;
  const ports: number[] = [];

  before(async () => {
    for (let id = 0; id < 3; id++) ports.push(await freePort());
    cluster = await startCluster({
      overrides: {
        'zookeeper.session.timeout.ms': 6000,
        'min.insync.replicas': 2,
        'brook.self.healing.broker.failure.timeout.ms': FAILURE_TIMEOUT_MS,
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

  it('reports the failed broker, the partitions under min ISR and the moves until all is healed', async () => {
    const c = cluster!;
    const controllerId = await agreedController(c.brokers);
    const victim = [0, 1, 2].find((id) => id !== controllerId)!;
    const live = [0, 1, 2].filter((id) => id !== victim);
    admin = new Admin({ bootstrapServers: c.brokers[controllerId]!.bootstrap, clientId: 'metrics-test' });
    const topic = 'watched';
    const created = await admin.createTopics([{ topic, numPartitions: PARTITIONS, replicationFactor: 2 }]);
    assert.equal(created[0]!.error, null);
    const partitions = async () => (await admin!.describeTopics([topic]))[0]!.partitions;
    const inSync = await waitForInSync(admin, topic, PARTITIONS, 2);
    const onVictim = inSync.filter((p) => p.replicas.includes(victim)).length;
    assert.ok(onVictim > 0, 'the victim holds replicas');

    const controllerSamples = () => scrape(ports[controllerId]!);
    const underMinIsr = async () => {
      const samples: Samples[] = await Promise.all(live.map((id) => scrape(ports[id]!)));
      return samples.reduce(
        (n, s) => n + s.value('kafka_server_replicamanager_underminisrpartitioncount'),
        0,
      );
    };
    // Partitions reported with a replica on a gone broker, over every state and action.
    const reported = (s: Samples) =>
      ['offline', 'under-replicated']
        .flatMap((state) =>
          ['waiting', 'moving', 'stuck', 'off', 'none'].map((action) =>
            s.value('brook_controller_selfhealing_partitions', { state, action }),
          ),
        )
        .reduce((a, b) => a + b, 0);
    const before = await controllerSamples();
    assert.equal(reported(before), 0);
    assert.equal(before.value('brook_controller_selfhealing_failedbrokers', { state: 'waiting' }), 0);
    assert.equal(before.value('brook_controller_selfhealing_moves', { outcome: 'started' }), 0);

    await c.brokers[victim]!.kill();
    await waitFor(
      'the controller counting a failed broker and the leaders partitions under min ISR',
      async () => {
        const s = await controllerSamples();
        const failed =
          s.value('brook_controller_selfhealing_failedbrokers', { state: 'waiting' }) +
          s.value('brook_controller_selfhealing_failedbrokers', { state: 'healing' });
        return failed === 1 && reported(s) === onVictim && (await underMinIsr()) === onVictim
          ? true
          : undefined;
      },
      30_000,
    );

    const healed = await waitFor(
      'every move finished and nothing under min ISR',
      async () => {
        const s = await controllerSamples();
        const started = s.value('brook_controller_selfhealing_moves', { outcome: 'started' });
        const done =
          started === onVictim &&
          s.value('brook_controller_selfhealing_moves', { outcome: 'finished' }) === started &&
          s.value('brook_controller_selfhealing_movingpartitions') === 0 &&
          s.value('brook_controller_selfhealing_failedbrokers', { state: 'waiting' }) === 0 &&
          s.value('brook_controller_selfhealing_failedbrokers', { state: 'healing' }) === 0;
        return done && (await underMinIsr()) === 0 ? s : undefined;
      },
      90_000,
    );
    assert.equal(healed.value('brook_controller_selfhealing_failedbrokers', { state: 'stuck' }), 0);
    assert.equal(reported(healed), 0, 'no partition is missing a replica any more');
    assert.equal(healed.value('brook_controller_selfhealing_moves', { outcome: 'cancelled' }), 0);
    assert.equal(healed.value('kafka_controller_kafkacontroller_offlinepartitionscount'), 0);
    assert.ok((await partitions()).every((p) => p.isr.length === 2 && !p.replicas.includes(victim)));
    const log = c.brokers[controllerId]!.log();
    assert.match(log, new RegExp(`self-healing: broker ${victim} is gone`));
    // Each partition that lost its replica is logged with the reason and the action.
    assert.match(
      log,
      new RegExp(
        `partition \\S+ is (under-replicated|offline): broker ${victim} gone since \\S+; action: its replica moves at \\S+ unless broker ${victim} returns`,
      ),
    );
    assert.match(
      log,
      new RegExp(
        `self-healing: broker ${victim} has been gone \\d+ ms \\(timeout ${FAILURE_TIMEOUT_MS} ms\\); moving ${onVictim} of its replicas`,
      ),
    );
    assert.match(log, new RegExp(`\\(replacing failed broker ${victim}\\)`));
  });
});
