// Reading topics' overrides from the store, many at once (at start for the logs on disk, and for the controller's
// requests): a topic without a node has none; a read that fails leaves what was known and names the topic.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { staticOnly } from '../../src/broker/config/config-layers.js';
import { readTopicOverrides } from '../../src/broker/stored-topic-configs.js';
import { TopicConfigs } from '../../src/broker/topic-configs.js';
import { InProcessStore } from '../../src/controller/store/in-process-store.js';
import { encodeEntityConfig, ensurePath, topicConfigPath } from '../../src/controller/zk-layout/index.js';

test('overrides of several topics are read at once; a failed read keeps what was known', async () => {
  const store = InProcessStore.open({ dataDir: null });
  const session = store.openSession();
  const path = topicConfigPath('compacted');
  assert.ok((await ensurePath(session, path.slice(0, path.lastIndexOf('/')))).ok);
  assert.ok((await session.create(path, encodeEntityConfig({ 'cleanup.policy': 'compact' }))).ok);
  const topicConfigs = new TopicConfigs(staticOnly(new Map()));

  assert.deepEqual(await readTopicOverrides(session, ['compacted', 'plain'], topicConfigs), []);
  assert.equal(topicConfigs.overridesFor('compacted').get('cleanup.policy'), 'compact');
  assert.equal(topicConfigs.hasOverrides('plain'), true);
  assert.equal(topicConfigs.overridesFor('plain').size, 0);

  await session.close();
  const unread = await readTopicOverrides(session, ['compacted', 'unknown'], topicConfigs);
  assert.deepEqual(
    unread.map((u) => u.topic),
    ['compacted', 'unknown'],
  );
  assert.ok(unread.every((u) => u.reason.length > 0));
  assert.equal(topicConfigs.overridesFor('compacted').get('cleanup.policy'), 'compact');
  assert.equal(topicConfigs.hasOverrides('unknown'), false);
});
