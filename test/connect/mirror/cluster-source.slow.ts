// The setup: the source is a three-broker ZooKeeper cluster (a replicated topic, acks=all), the target a
// single node; identity policy, a producer writing throughout, a consumer group committing on the source, then
// the switch to the target once the mirror caught up and the group's translated offsets are in place there.
// Every record is consumed at least once across the switch; the duplicates are counted and reported.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Admin, Consumer, Producer } from '../../../src/client/index.js';
import { type BrokerProcess, startBroker } from '../../helpers/broker-process.js';
import { startCluster, type TestCluster } from '../../helpers/test-cluster.js';
import { sleep } from '../../helpers/wait.js';
import { type MirrorProcess, startMirrorMaker, writeMm2 } from './mirror-process.js';

const PARTITIONS = 3;

let source: TestCluster;
let target: BrokerProcess;
let dir: string;
let mm: MirrorProcess | null = null;

before(async () => {
  [source, target] = await Promise.all([
    startCluster({
      overrides: { 'offsets.topic.replication.factor': 3, 'group.initial.rebalance.delay.ms': 0 },
    }),
    startBroker(),
  ]);
  dir = mkdtempSync(join(tmpdir(), 'brook-mirror-cluster-'));
});

after(async () => {
  await mm?.stop();
  await Promise.all([source?.stop(), target?.stop()]);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

test('from a three-broker cluster to a single node: no record skipped across the switch', async () => {
  const admin = new Admin({ bootstrapServers: source.bootstrap });
  const targetAdmin = new Admin({ bootstrapServers: target.bootstrap });
  try {
    await admin.createTopics([
      {
        topic: 'payments',
        numPartitions: PARTITIONS,
        replicationFactor: 3,
        configs: { 'min.insync.replicas': '2' },
      },
    ]);
    const producer = new Producer({ bootstrapServers: source.bootstrap, acks: 'all', lingerMs: 5 });
    let produced = 0;
    let stopping = false;
    const writing = (async () => {
      while (!stopping) {
        await producer.sendBatch(
          Array.from({ length: 30 }, () => {
            const seq = produced++;
            return { topic: 'payments', partition: seq % PARTITIONS, value: Buffer.from(String(seq)) };
          }),
        );
        await sleep(10);
      }
    })();
    mm = await startMirrorMaker(
      writeMm2(dir, {
        clusters: 'old, new',
        'old.bootstrap.servers': source.bootstrap,
        'new.bootstrap.servers': target.bootstrap,
        'old->new.enabled': true,
        'old->new.topics': 'payments',
        'replication.policy.class': 'IdentityReplicationPolicy',
        'replication.factor': 1,
        'refresh.groups.interval.ms': 1000,
        'emit.checkpoints.interval.ms': 500,
        'sync.group.offsets.enabled': true,
        'sync.group.offsets.interval.ms': 500,
        'offset.flush.interval.ms': 1000,
        'offset-syncs.topic.replication.factor': 3,
        'checkpoints.topic.replication.factor': 1,
        'heartbeats.topic.replication.factor': 1,
        'offset.storage.replication.factor': 1,
      }),
    );
    const consumed = new Set<string>();
    const app = new Consumer({
      bootstrapServers: source.bootstrap,
      groupId: 'billing',
      autoOffsetReset: 'earliest',
      enableAutoCommit: false,
    });
    app.subscribe(['payments']);
    const until = Date.now() + 4000;
    while (Date.now() < until) {
      for (const r of await app.poll(200)) consumed.add(r.value!.toString());
      await app.commit();
    }
    await app.close();
    stopping = true;
    await writing;
    await producer.close();

    // The switch: the mirror caught up, the target group's offsets stable for 3 s.
    const ends = async (a: Admin) =>
      (
        await a.listOffsets(
          Array.from({ length: PARTITIONS }, (_, partition) => ({
            topic: 'payments',
            partition,
            spec: 'latest' as const,
          })),
        )
      )
        .map((o) => o.offset)
        .join(',');
    const sourceEnds = await ends(admin);
    const deadline = Date.now() + 90_000;
    while ((await ends(targetAdmin).catch(() => '')) !== sourceEnds) {
      assert.ok(
        Date.now() < deadline,
        `the mirror did not catch up with ${sourceEnds}\n${mm.output().slice(-2000)}`,
      );
      await sleep(250);
    }
    let offsets = '';
    let stableSince = Date.now();
    while (offsets === '' || Date.now() - stableSince < 3000) {
      assert.ok(Date.now() < deadline, `target group offsets never settled: ${offsets}`);
      const now = JSON.stringify(await targetAdmin.listConsumerGroupOffsets('billing'));
      if (now !== offsets || JSON.parse(now).length < PARTITIONS) {
        offsets = JSON.parse(now).length < PARTITIONS ? '' : now;
        stableSince = Date.now();
      }
      await sleep(250);
    }

    const moved = new Consumer({
      bootstrapServers: target.bootstrap,
      groupId: 'billing',
      enableAutoCommit: false,
    });
    moved.subscribe(['payments']);
    let duplicates = 0;
    const all = new Set(consumed);
    const readDeadline = Date.now() + 60_000;
    while (all.size < produced && Date.now() < readDeadline) {
      for (const r of await moved.poll(300)) {
        const v = r.value!.toString();
        if (consumed.has(v)) duplicates++;
        all.add(v);
      }
    }
    await moved.close();
    const missing = Array.from({ length: produced }, (_, i) => String(i)).filter((v) => !all.has(v));
    assert.deepEqual(missing.slice(0, 10), [], `${missing.length} of ${produced} never consumed`);
    process.stdout.write(
      `# three-broker source: ${produced} records, ${consumed.size} consumed on the source, ${duplicates} again on the target\n`,
    );
  } finally {
    await admin.close();
    await targetAdmin.close();
  }
});
