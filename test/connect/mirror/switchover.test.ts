// A migration with the identity policy: a producer writes continuously to the source, a consumer group there
// commits as it goes, the mirror translates its offsets and commits them to the same group on the target; the
// consumers then stop and start again on the target. Every record is consumed at least once across the switch,
// none is skipped, and the duplicates (reported) stay within what offset.lag.max allows. And: kill -9 of the
// mirror process mid-stream, then a restart, loses no record.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admin, Consumer, Producer } from '../../../src/client/index.js';
import { decodeCheckpoint } from '../../../src/connect/mirror/records.js';
import { sleep } from '../../helpers/wait.js';
import { useMirrorClusters } from './mirror-clusters.js';
import { startMirrorMaker, writeTwoClusterMm2 } from './mirror-process.js';

const PARTITIONS = 3;
const OFFSET_LAG_MAX = 100;

const clusters = useMirrorClusters('brook-mirror-');

/**
 * The file of a flow `source`->B. Processes with the same source alias on the same target join one Connect group
 * (`<source>-mm2`) and share one config, as in Kafka: each test mirrors under its own alias.
 */
function mm2(topics: string, source = 'A'): string {
  return writeTwoClusterMm2(
    clusters.dir,
    { source, sourceBootstrap: clusters.a.bootstrap, targetBootstrap: clusters.b.bootstrap, topics },
    {
      'replication.policy.class': 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy',
      'refresh.topics.interval.ms': 1000,
      'refresh.groups.interval.ms': 1000,
      'emit.checkpoints.interval.ms': 500,
      'sync.group.offsets.enabled': true,
      'sync.group.offsets.interval.ms': 500,
      'offset.lag.max': OFFSET_LAG_MAX,
      'offset.flush.interval.ms': 1000,
    },
  );
}

/** Writes sequence numbers to `topic` (partition = n % PARTITIONS) until stopped; resolves to the count. */
function produceContinuously(topic: string): { stop: () => Promise<number> } {
  const producer = new Producer({ bootstrapServers: clusters.a.bootstrap, lingerMs: 5 });
  let n = 0;
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      const batch = Array.from({ length: 50 }, () => {
        const seq = n++;
        return {
          topic,
          partition: seq % PARTITIONS,
          key: Buffer.from(`k${seq}`),
          value: Buffer.from(String(seq)),
        };
      });
      await producer.sendBatch(batch);
      await sleep(10);
    }
  })();
  return {
    async stop() {
      stopping = true;
      await loop;
      await producer.close();
      return n;
    },
  };
}

async function createTopic(topic: string): Promise<void> {
  const admin = new Admin({ bootstrapServers: clusters.a.bootstrap });
  try {
    await admin.createTopics([{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }]);
  } finally {
    await admin.close();
  }
}

/** Reads every partition of `topic` on `bootstrap` from the start until `count` distinct values are seen. */
async function distinctValues(bootstrap: string, topic: string, count: number): Promise<Map<string, number>> {
  const consumer = new Consumer({
    bootstrapServers: bootstrap,
    enableAutoCommit: false,
    autoOffsetReset: 'earliest',
  });
  const seen = new Map<string, number>();
  try {
    consumer.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition })));
    const deadline = Date.now() + 60_000;
    while (seen.size < count && Date.now() < deadline) {
      for (const r of await consumer.poll(500)) {
        const v = r.value!.toString();
        seen.set(v, (seen.get(v) ?? 0) + 1);
      }
    }
  } finally {
    await consumer.close();
  }
  return seen;
}

test('consumers switched to the target with translated offsets skip nothing; duplicates are bounded', async () => {
  await createTopic('events');
  const producer = produceContinuously('events');
  const mirror = await startMirrorMaker(mm2('events'));
  clusters.mirrors.push(mirror);

  // The application on the source: consumes and commits after each poll.
  const consumed = new Map<string, number>();
  const app = new Consumer({
    bootstrapServers: clusters.a.bootstrap,
    groupId: 'app',
    autoOffsetReset: 'earliest',
    enableAutoCommit: false,
  });
  app.subscribe(['events']);
  // At least 4 s, and until something was consumed: joining the group can take longer on a loaded machine.
  const until = Date.now() + 4000;
  const joinDeadline = Date.now() + 60_000;
  while (Date.now() < until || (consumed.size === 0 && Date.now() < joinDeadline)) {
    for (const r of await app.poll(200)) consumed.set(r.value!.toString(), 1);
    await app.commit();
  }
  await app.close();
  await sleep(500);
  const produced = await producer.stop();
  assert.ok(
    consumed.size > 0 && consumed.size < produced,
    `${consumed.size} of ${produced} consumed on the source`,
  );

  // As a runbook does: wait for the mirror to catch up, then for the checkpoints to settle (none new for
  // 3 s: more than offset.flush.interval.ms, after which held offset syncs go out, plus a checkpoint interval),
  // then for the target group to hold the last checkpoints' offsets.
  const source = new Admin({ bootstrapServers: clusters.a.bootstrap });
  const target = new Admin({ bootstrapServers: clusters.b.bootstrap });
  const ends = async (admin: Admin) =>
    (
      await admin.listOffsets(
        Array.from({ length: PARTITIONS }, (_, partition) => ({
          topic: 'events',
          partition,
          spec: 'latest' as const,
        })),
      )
    )
      .map((o) => o.offset)
      .join(',');
  try {
    const committedUpstream = new Map(
      (await source.listConsumerGroupOffsets('app')).map((o) => [o.partition, o.offset]),
    );
    assert.equal(committedUpstream.size, PARTITIONS);
    const sourceEnds = await ends(source);
    const caughtUp = Date.now() + 60_000;
    while ((await ends(target).catch(() => '')) !== sourceEnds) {
      assert.ok(Date.now() < caughtUp, `the mirror did not catch up with ${sourceEnds}`);
      await sleep(200);
    }
    const cps = new Consumer({
      bootstrapServers: clusters.b.bootstrap,
      enableAutoCommit: false,
      autoOffsetReset: 'earliest',
    });
    cps.assign([{ topic: 'A.checkpoints.internal', partition: 0 }]);
    const last = new Map<number, { upstream: number; downstream: number }>();
    let quietSince = Date.now();
    // Settled: none new for 3 s, and each partition's checkpoint reflects the final commit. With the identity
    // policy the target holds the same records at the same offsets, so the final commit translates to at most
    // offset.lag.max + 1 behind it; a quiet spell alone can end early on a loaded machine, on an older checkpoint.
    const reflectsFinalCommit = () =>
      [...committedUpstream].every(([p, o]) => (last.get(p)?.downstream ?? -1) >= o - (OFFSET_LAG_MAX + 1));
    const settleDeadline = Date.now() + 120_000;
    while (Date.now() - quietSince < 3000 || last.size < PARTITIONS || !reflectsFinalCommit()) {
      // Once under a fully loaded CI run (2026-12-04) one partition's checkpoint stayed 109 behind its final commit
      // for 120 s while the others settled; it passed alone. The mirror's log says what its tasks did meanwhile.
      assert.ok(
        Date.now() < settleDeadline,
        `checkpoints never settled: ${JSON.stringify([...last])}, committed ${JSON.stringify([...committedUpstream])}; ` +
          `the mirror's log ends:\n${mirror.output().slice(-6000)}`,
      );
      for (const r of await cps.poll(300)) {
        const cp = decodeCheckpoint(r.key!, r.value!);
        assert.equal(cp.group, 'app');
        assert.equal(cp.topic, 'events', 'identity policy: same topic name');
        last.set(cp.partition, { upstream: cp.upstreamOffset, downstream: cp.downstreamOffset });
        quietSince = Date.now();
      }
    }
    await cps.close();
    // Kafka's checkpointIsMoreRecent emits a checkpoint only when its downstream offset moves on, so the last
    // one may carry an earlier upstream offset that translates to the same downstream offset as the final commit.
    for (const [p, o] of committedUpstream) {
      const upstream = last.get(p)?.upstream;
      assert.ok(
        upstream !== undefined && upstream <= o,
        `partition ${p}: checkpoint ${upstream}, committed ${o}`,
      );
    }
    let targetOffsets = new Map<number, number>();
    const expected = JSON.stringify([...last].map(([p, c]) => [p, c.downstream]).sort());
    const syncDeadline = Date.now() + 30_000;
    while (JSON.stringify([...targetOffsets].sort()) !== expected) {
      assert.ok(
        Date.now() < syncDeadline,
        `target offsets ${JSON.stringify([...targetOffsets])}, expected ${expected}`,
      );
      await sleep(200);
      targetOffsets = new Map(
        (await target.listConsumerGroupOffsets('app')).map((o) => [o.partition, o.offset]),
      );
    }
  } finally {
    await source.close();
    await target.close();
  }

  // The application on the target, from the translated offsets.
  const after = new Consumer({
    bootstrapServers: clusters.b.bootstrap,
    groupId: 'app',
    autoOffsetReset: 'none' as never,
    enableAutoCommit: false,
  });
  after.subscribe(['events']);
  let duplicates = 0;
  const all = new Set(consumed.keys());
  const deadline = Date.now() + 60_000;
  while (all.size < produced && Date.now() < deadline) {
    for (const r of await after.poll(300)) {
      const v = r.value!.toString();
      if (consumed.has(v)) duplicates++;
      all.add(v);
    }
  }
  await after.close();
  const missing = Array.from({ length: produced }, (_, i) => String(i)).filter((v) => !all.has(v));
  assert.deepEqual(missing.slice(0, 10), [], `${missing.length} of ${produced} records never consumed`);
  process.stdout.write(
    `# switchover: ${produced} records, ${consumed.size} consumed on the source, ${duplicates} consumed again on the target (bound ${PARTITIONS * (OFFSET_LAG_MAX + 1)})\n`,
  );
  assert.ok(duplicates <= PARTITIONS * (OFFSET_LAG_MAX + 1), `${duplicates} duplicates`);
});

test('kill -9 of the mirror mid-stream: the restarted mirror resumes from its stored offsets without loss', async () => {
  await createTopic('stream');
  const producer = produceContinuously('stream');
  const file = mm2('stream', 'K');
  const first = await startMirrorMaker(file);
  await sleep(2500);
  await first.kill();
  await sleep(1000);
  const second = await startMirrorMaker(file);
  clusters.mirrors.push(second);
  assert.match(second.output(), /MirrorMaker started/);
  await sleep(1500);
  const produced = await producer.stop();
  const seen = await distinctValues(clusters.b.bootstrap, 'stream', produced);
  const missing = Array.from({ length: produced }, (_, i) => String(i)).filter((v) => !seen.has(v));
  assert.deepEqual(missing.slice(0, 10), [], `${missing.length} of ${produced} records lost`);
  const copies = [...seen.values()].reduce((x, y) => x + y, 0);
  process.stdout.write(`# kill -9: ${produced} records, ${copies - produced} mirrored twice\n`);
});
