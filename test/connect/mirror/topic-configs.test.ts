// Topic configs on the target as Kafka's MirrorSourceConnector keeps them: a remote topic is created with the
// source topic's configs whether or not sync.topic.configs.enabled is on (Kafka's createNewTopics always copies
// them), and the periodic sync removes from the remote topic an override that was removed on the source (Kafka's
// incremental sync deletes a config that is a default on the source, use.defaults.from=target), while configs
// excluded by config.properties.exclude are left alone. A value the source's brokers give every topic dynamically
// (a cluster-wide log.retention.ms) is the source topic's value too, and Kafka copies it to the remote topic.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admin, type ConfigEntry } from '../../../src/client/index.js';
import { MirrorMaker } from '../../../src/connect/mirror/mirror-maker.js';
import { sleep } from '../../helpers/wait.js';
import { useMirrorClusters } from './mirror-clusters.js';

const clusters = useMirrorClusters('brook-mirror-configs-');

/** An in-process mirror of `topics` from alias `source` (cluster A) to `target` (cluster B). */
function startMirror(source: string, target: string, topics: string, extra: Record<string, string>) {
  return MirrorMaker.start(
    {
      clusters: `${source}, ${target}`,
      [`${source}.bootstrap.servers`]: clusters.a.bootstrap,
      [`${target}.bootstrap.servers`]: clusters.b.bootstrap,
      [`${source}->${target}.enabled`]: 'true',
      [`${source}->${target}.topics`]: topics,
      'replication.factor': '1',
      'emit.checkpoints.enabled': 'false',
      'emit.heartbeats.enabled': 'false',
      'offset-syncs.topic.replication.factor': '1',
      'heartbeats.topic.replication.factor': '1',
      'checkpoints.topic.replication.factor': '1',
      'offset.storage.replication.factor': '1',
      ...extra,
    },
    () => {},
  );
}

async function topicConfig(admin: Admin, topic: string, key: string): Promise<ConfigEntry | null> {
  const [r] = await admin.describeConfigs([{ type: 'topic', name: topic, keys: [key] }]);
  if (r === undefined || r.error !== null) return null;
  return r.configs.find((c) => c.name === key) ?? null;
}

/** Polls every 250 ms until `check` holds for the topic's entry `key`; the last entry seen when it never does. */
async function untilConfig(
  admin: Admin,
  topic: string,
  key: string,
  check: (e: ConfigEntry) => boolean,
  timeoutMs: number,
): Promise<{ ok: boolean; last: ConfigEntry | null }> {
  const deadline = Date.now() + timeoutMs;
  let last: ConfigEntry | null = null;
  while (Date.now() < deadline) {
    last = await topicConfig(admin, topic, key).catch(() => null);
    if (last !== null && check(last)) return { ok: true, last };
    await sleep(250);
  }
  return { ok: false, last };
}

test('sync.topic.configs.enabled=false: a remote topic is still created with the source topic configs', async (t) => {
  const source = new Admin({ bootstrapServers: clusters.a.bootstrap });
  const target = new Admin({ bootstrapServers: clusters.b.bootstrap });
  t.after(() => Promise.all([source.close(), target.close()]));
  // A compacted topic kept forever: created on the target with the broker defaults (delete, 7 days), its
  // mirrored copy would lose records the source keeps.
  await source.createTopics([
    {
      topic: 'accounts',
      numPartitions: 1,
      replicationFactor: 1,
      configs: { 'cleanup.policy': 'compact', 'retention.ms': '-1' },
    },
  ]);
  const mm = await startMirror('A', 'B', 'accounts', { 'sync.topic.configs.enabled': 'false' });
  t.after(() => mm.stop());

  const policy = await untilConfig(target, 'A.accounts', 'cleanup.policy', () => true, 30_000);
  assert.ok(policy.ok, 'A.accounts was not created');
  assert.equal(policy.last?.value, 'compact');
  assert.equal((await topicConfig(target, 'A.accounts', 'retention.ms'))?.value, '-1');
});

test('an override removed on the source is removed from the remote topic; excluded configs stay', async (t) => {
  const source = new Admin({ bootstrapServers: clusters.a.bootstrap });
  const target = new Admin({ bootstrapServers: clusters.b.bootstrap });
  t.after(() => Promise.all([source.close(), target.close()]));
  // A retention lowered for a while (to purge a topic) and then put back to the default: the copy must not keep
  // the short retention and go on deleting what the source keeps.
  await source.createTopics([
    { topic: 'ledger', numPartitions: 1, replicationFactor: 1, configs: { 'retention.ms': '3600000' } },
  ]);
  const mm = await startMirror('S', 'T', 'ledger', { 'sync.topic.configs.interval.ms': '1000' });
  t.after(() => mm.stop());
  const set = await untilConfig(target, 'S.ledger', 'retention.ms', (e) => e.value === '3600000', 30_000);
  assert.ok(set.ok, `retention.ms not copied: ${JSON.stringify(set.last)}`);
  // An operator's override on the remote topic of a config Kafka never syncs (config.properties.exclude).
  await target.incrementalAlterConfigs([
    { type: 'topic', name: 'S.ledger', ops: [{ name: 'min.insync.replicas', op: 'set', value: '1' }] },
  ]);

  await source.incrementalAlterConfigs([
    { type: 'topic', name: 'ledger', ops: [{ name: 'retention.ms', op: 'delete' }] },
  ]);
  const reset = await untilConfig(
    target,
    'S.ledger',
    'retention.ms',
    (e) => e.source !== 'DYNAMIC_TOPIC_CONFIG',
    30_000,
  );
  assert.ok(reset.ok, `retention.ms still overridden on the target: ${JSON.stringify(reset.last)}`);
  assert.equal(reset.last?.value, '604800000');
  const excluded = await topicConfig(target, 'S.ledger', 'min.insync.replicas');
  assert.equal(excluded?.source, 'DYNAMIC_TOPIC_CONFIG', 'an excluded config was deleted on the target');
});

test("a cluster-wide dynamic default of the source's brokers reaches the remote topic, as Kafka's", async (t) => {
  const source = new Admin({ bootstrapServers: clusters.a.bootstrap });
  const target = new Admin({ bootstrapServers: clusters.b.bootstrap });
  let mm: MirrorMaker | null = null;
  // One hook, in order: the mirror stops, the source's default is removed again, then the admins close.
  t.after(async () => {
    await mm?.stop();
    await source.incrementalAlterConfigs([
      { type: 'broker', name: '', ops: [{ name: 'log.retention.ms', op: 'delete' }] },
    ]);
    await Promise.all([source.close(), target.close()]);
  });
  // Thirty days for every topic of the source that does not say otherwise (kafka-configs --entity-default).
  const [r] = await source.incrementalAlterConfigs([
    { type: 'broker', name: '', ops: [{ name: 'log.retention.ms', op: 'set', value: '2592000000' }] },
  ]);
  assert.equal(r?.error, null);
  await source.createTopics([{ topic: 'archive', numPartitions: 1, replicationFactor: 1 }]);
  const seen = await untilConfig(source, 'archive', 'retention.ms', (e) => e.value === '2592000000', 15_000);
  assert.equal(seen.last?.source, 'DYNAMIC_DEFAULT_BROKER_CONFIG');
  mm = await startMirror('U', 'V', 'archive', {});

  const copied = await untilConfig(target, 'U.archive', 'retention.ms', () => true, 30_000);
  assert.ok(copied.ok, 'U.archive was not created');
  assert.equal(copied.last?.value, '2592000000', 'the copy would expire records the source keeps');
});

test('every config sync undoes edits made on the remote topic, as Kafka writes the source configs', async (t) => {
  const source = new Admin({ bootstrapServers: clusters.a.bootstrap });
  const target = new Admin({ bootstrapServers: clusters.b.bootstrap });
  t.after(() => Promise.all([source.close(), target.close()]));
  await source.createTopics([
    { topic: 'prices', numPartitions: 1, replicationFactor: 1, configs: { 'retention.ms': '3600000' } },
  ]);
  const mm = await startMirror('P', 'Q', 'prices', { 'sync.topic.configs.interval.ms': '1000' });
  t.after(() => mm.stop());
  const copied = await untilConfig(target, 'P.prices', 'retention.ms', (e) => e.value === '3600000', 30_000);
  assert.ok(copied.ok, `retention.ms not copied: ${JSON.stringify(copied.last)}`);
  // Someone edits the copy on the target while the source stays the same: a synced value changed, and an override
  // of a config that is at its default on the source.
  const [edit] = await target.incrementalAlterConfigs([
    {
      type: 'topic',
      name: 'P.prices',
      ops: [
        { name: 'retention.ms', op: 'set', value: '60000' },
        { name: 'segment.ms', op: 'set', value: '120000' },
      ],
    },
  ]);
  assert.equal(edit?.error, null);

  const restored = await untilConfig(
    target,
    'P.prices',
    'retention.ms',
    (e) => e.value === '3600000',
    15_000,
  );
  assert.ok(restored.ok, `the edited retention.ms stayed: ${JSON.stringify(restored.last)}`);
  const segment = await untilConfig(
    target,
    'P.prices',
    'segment.ms',
    (e) => e.source !== 'DYNAMIC_TOPIC_CONFIG',
    15_000,
  );
  assert.ok(segment.ok, `the segment.ms override stayed: ${JSON.stringify(segment.last)}`);
});
