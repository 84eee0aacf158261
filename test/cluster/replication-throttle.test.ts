// Replication throttles in a ZooKeeper cluster of three broker processes: `brook reassign-partitions --execute
// --throttle` sets Kafka's throttle configs (the moving partitions' replicas on the topic, the rates on the brokers
// involved), the new replica then catches up at about the throttled rate instead of at once, and `--verify` clears
// every throttle once the move is done. The brokers run replication.quota.window.num=2 (windows of 1 s), so that
// the rate bites after about a second of traffic, and replica.fetch.max.bytes=100000: the leader checks the rate
// before each read, as Kafka does, so with the default 1 MiB a single fetch would take most of the data at once.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { run } from '../helpers/broker-process.js';
import { agreedController, partitionView, waitFor } from '../helpers/cluster.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';

const BROOK = resolve(import.meta.dirname, '../../../bin/brook');
const TOPIC = 'throttled-move';
/** 1.5 MB to move at 250 kB/s: about 5 s once the first second's worth has gone. */
const BYTES = 1_500_000;
const RATE = 250_000;

function brook(...args: string[]) {
  return run(process.execPath, [BROOK, ...args], { timeoutMs: 60_000 });
}

describe('replication throttles', () => {
  let cluster: TestCluster;
  let admin: Admin;
  const files = mkdtempSync(join(tmpdir(), 'brook-throttle-'));

  before(async () => {
    cluster = await startCluster({
      overrides: { 'replication.quota.window.num': 2, 'replica.fetch.max.bytes': 100_000 },
    });
    admin = new Admin({ bootstrapServers: cluster.bootstrap, clientId: 'throttle-test' });
  });
  after(async () => {
    await admin?.close();
    await cluster?.stop();
    rmSync(files, { recursive: true, force: true });
  });

  async function configValue(type: 'topic' | 'broker', name: string, key: string): Promise<string | null> {
    const [r] = await admin.describeConfigs([{ type, name, keys: [key] }]);
    const entry = r!.configs.find((c) => c.name === key);
    const dynamic = entry?.source === 'DYNAMIC_TOPIC_CONFIG' || entry?.source === 'DYNAMIC_BROKER_CONFIG';
    return dynamic ? (entry?.value ?? null) : null;
  }

  it('reassign-partitions --throttle holds the move to the rate and --verify clears the throttles', async () => {
    const controllerId = await agreedController(cluster.brokers);
    const [source, target] = [0, 1, 2].filter((id) => id !== controllerId) as [number, number];
    const created = await admin.createTopics([{ topic: TOPIC, replicaAssignment: { 0: [source] } }]);
    assert.equal(created[0]!.error, null);
    await waitFor('a leader', async () =>
      (await partitionView(cluster.brokers[source]!, TOPIC))?.leaderId === source ? true : undefined,
    );
    const producer = new Producer({ bootstrapServers: cluster.brokers[source]!.bootstrap, acks: 1 });
    try {
      const value = Buffer.alloc(10_000, 7);
      for (let i = 0; i < BYTES / value.length; i += 10)
        await Promise.all(Array.from({ length: 10 }, () => producer.send({ topic: TOPIC, value })));
    } finally {
      await producer.close();
    }
    const file = join(files, 'move.json');
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        partitions: [{ topic: TOPIC, partition: 0, replicas: [source, target] }],
      }),
    );
    const bootstrap = cluster.brokers[source]!.bootstrap;
    const startedAt = performance.now();
    const executed = await brook(
      'reassign-partitions',
      '--bootstrap-server',
      bootstrap,
      '--execute',
      '--reassignment-json-file',
      file,
      '--throttle',
      String(RATE),
    );
    assert.equal(executed.code, 0, executed.stderr);
    assert.match(executed.stdout, /Warning: You must run --verify periodically/);
    assert.match(executed.stdout, new RegExp(`The inter-broker throttle limit was set to ${RATE} B/s\\n`));
    assert.equal(await configValue('topic', TOPIC, 'leader.replication.throttled.replicas'), `0:${source}`);
    assert.equal(await configValue('topic', TOPIC, 'follower.replication.throttled.replicas'), `0:${target}`);
    for (const b of [source, target])
      assert.equal(await configValue('broker', String(b), 'leader.replication.throttled.rate'), String(RATE));
    // The new replica's log on disk: it grows at about the throttled rate.
    const copied = (): number => {
      const dir = join(cluster.brokers[target]!.dataDir, `${TOPIC}-0`);
      if (!existsSync(dir)) return 0;
      return readdirSync(dir)
        .filter((f) => f.endsWith('.log'))
        .reduce((n, f) => n + statSync(join(dir, f)).size, 0);
    };
    await waitFor(
      'the data copied to the new replica',
      async () => (copied() >= BYTES ? true : undefined),
      60_000,
    );
    const seconds = (performance.now() - startedAt) / 1000;
    // Unthrottled, the same move takes about 1.4 s here; throttled, about 5 s.
    assert.ok(seconds >= 3, `1.5 MB moved at ${RATE} B/s in ${seconds.toFixed(2)} s`);
    await waitFor(
      'the new replica in the ISR',
      async () =>
        (await partitionView(cluster.brokers[source]!, TOPIC))?.isrNodes.length === 2 ? true : undefined,
      60_000,
    );
    await waitFor('--verify to report completion', async () => {
      const verified = await brook(
        'reassign-partitions',
        '--bootstrap-server',
        bootstrap,
        '--verify',
        '--reassignment-json-file',
        file,
      );
      return verified.stdout.includes('is completed.') ? verified.stdout : undefined;
    }).then((stdout) => {
      assert.match(stdout, /Clearing broker-level throttles on brokers /);
      assert.match(stdout, new RegExp(`Clearing topic-level throttles on topic ${TOPIC}\\n`));
    });
    assert.equal(await configValue('topic', TOPIC, 'leader.replication.throttled.replicas'), null);
    assert.equal(await configValue('broker', String(target), 'follower.replication.throttled.rate'), null);
  });
});
