// Topic configs are synced on their own timer (sync.topic.configs.interval), not only when the topics are refreshed:
// with refresh.topics.interval at ten minutes, a config changed on the source after the mirror started reaches the
// remote topic within the config-sync interval. Fails when config sync runs only inside the topic refresh.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admin } from '../../../src/client/index.js';
import { MirrorMaker } from '../../../src/connect/mirror/mirror-maker.js';
import { startBroker } from '../../helpers/broker-process.js';
import { sleep } from '../../helpers/wait.js';

/** Waits (polling every 250 ms) until the remote topic's config has `value`; false after `timeoutMs`. */
async function configReaches(admin: Admin, topic: string, key: string, value: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await topicConfig(admin, topic, key).catch(() => null)) === value) return true;
    await sleep(250);
  }
  return false;
}

async function topicConfig(admin: Admin, topic: string, key: string): Promise<string | null> {
  const [r] = await admin.describeConfigs([{ type: 'topic', name: topic, keys: [key] }]);
  return r?.configs[0]?.value ?? null;
}

test('a source topic config change reaches the target within sync.topic.configs.interval while refresh.topics.interval is long', async (t) => {
  const [a, b] = await Promise.all([startBroker(), startBroker()]);
  // Stopped in reverse order of start, the mirror first (t.after hooks run in registration order).
  const stops: (() => Promise<unknown>)[] = [() => Promise.all([a.stop(), b.stop()])];
  t.after(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
  });
  const source = new Admin({ bootstrapServers: a.bootstrap });
  const target = new Admin({ bootstrapServers: b.bootstrap });
  stops.push(() => Promise.all([source.close(), target.close()]));
  await source.createTopics([
    { topic: 'ledger', numPartitions: 1, replicationFactor: 1, configs: { 'retention.ms': '86400000' } },
  ]);
  const mm = await MirrorMaker.start(
    {
      clusters: 'A, B',
      'A.bootstrap.servers': a.bootstrap,
      'B.bootstrap.servers': b.bootstrap,
      'A->B.enabled': 'true',
      'A->B.topics': 'ledger',
      'replication.factor': '1',
      'refresh.topics.interval.seconds': '600',
      'sync.topic.configs.interval.ms': '1000',
      'offset-syncs.topic.replication.factor': '1',
      'heartbeats.topic.replication.factor': '1',
      'checkpoints.topic.replication.factor': '1',
      'offset.storage.replication.factor': '1',
    },
    () => {},
  );
  stops.push(() => mm.stop());
  // The start syncs once: the remote topic has the source's config.
  assert.ok(await configReaches(target, 'A.ledger', 'retention.ms', '86400000', 30_000), 'initial sync');

  await source.incrementalAlterConfigs([
    { type: 'topic', name: 'ledger', ops: [{ name: 'retention.ms', op: 'set', value: '3600000' }] },
  ]);
  const changedAt = Date.now();
  // Generous for a loaded machine, yet far below the ten-minute refresh that would otherwise carry it.
  const synced = await configReaches(target, 'A.ledger', 'retention.ms', '3600000', 60_000);
  assert.ok(synced, `retention.ms not synced ${Date.now() - changedAt} ms after the change`);
});
