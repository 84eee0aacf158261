// A flow's herder that fails after MirrorMaker started ends the process, as Kafka's DistributedHerder does when
// its work thread meets an exception it cannot retry (it logs "Uncaught exception in herder work thread, exiting"
// and calls Exit.exit(1)): a supervisor sees the exit and can restart or alert, instead of a process that runs on
// without replicating. Here the target takes the flow's Connect group (`A-mm2`) away from the mirror's account
// once it has joined; the next rebalance (a new consumer group on the source gives MirrorCheckpointConnector its
// first task) is refused with GROUP_AUTHORIZATION_FAILED.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Admin } from '../../../src/client/index.js';
import { ACL_USERS, addAcls, removeAcls, startAclBroker } from '../../helpers/acl-broker.js';
import { startBroker } from '../../helpers/broker-process.js';
import { startMirrorMaker, writeMm2 } from './mirror-process.js';

// Kafka's ACL codes: resource TOPIC (2), GROUP (3), CLUSTER (4); operation ALL (2).
const TOPIC = 2;
const GROUP = 3;
const CLUSTER = 4;
const ALL = 2;

test('brook mirror-maker exits 1 when a flow herder fails after the start, as Kafka MirrorMaker', async (t) => {
  const [source, target] = await Promise.all([startBroker(), startAclBroker()]);
  t.after(() => Promise.all([source.stop(), target.broker.stop()]));
  const dir = mkdtempSync(join(tmpdir(), 'brook-mirror-herder-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const wire = await target.admin();
  t.after(() => wire.close());
  await addAcls(wire, [
    { resourceType: TOPIC, resourceName: '*', principal: 'User:alice', operation: ALL },
    { resourceType: CLUSTER, resourceName: 'kafka-cluster', principal: 'User:alice', operation: ALL },
    { resourceType: GROUP, resourceName: 'A-mm2', principal: 'User:alice', operation: ALL },
  ]);
  const file = writeMm2(dir, {
    clusters: 'A, T',
    'A.bootstrap.servers': source.bootstrap,
    'T.bootstrap.servers': `127.0.0.1:${target.saslPort}`,
    'T.security.protocol': 'SASL_PLAINTEXT',
    'T.sasl.mechanism': 'PLAIN',
    'T.sasl.jaas.config':
      'org.apache.kafka.common.security.plain.PlainLoginModule required ' +
      `username="alice" password="${ACL_USERS.alice}";`,
    'A->T.enabled': 'true',
    'T->A.emit.heartbeats.enabled': 'false',
    'refresh.groups.interval.ms': '500',
    'replication.factor': '1',
    'offset-syncs.topic.replication.factor': '1',
    'heartbeats.topic.replication.factor': '1',
    'checkpoints.topic.replication.factor': '1',
    'offset.storage.replication.factor': '1',
    'config.storage.replication.factor': '1',
    'status.storage.replication.factor': '1',
  });
  const mm = await startMirrorMaker(file);
  t.after(() => mm.kill());

  assert.ok((await removeAcls(wire, GROUP, 'A-mm2')) > 0);
  const admin = new Admin({ bootstrapServers: source.bootstrap });
  t.after(() => admin.close());
  await admin.createTopics([{ topic: 'orders', numPartitions: 1, replicationFactor: 1 }]);
  const results = await admin.alterConsumerGroupOffsets('order-readers', [
    { topic: 'orders', partition: 0, offset: 0 },
  ]);
  assert.deepEqual(
    results.map((r) => r.error),
    [null],
  );

  let timer: NodeJS.Timeout | undefined;
  const running = new Promise<'running'>((resolve) => {
    timer = setTimeout(() => resolve('running'), 60_000);
  });
  const code = await Promise.race([mm.exited(), running]);
  clearTimeout(timer);
  assert.notEqual(
    code,
    'running',
    `still running 60 s after its group was refused:\n${mm.output().slice(-3000)}`,
  );
  assert.equal(code, 1, mm.output().slice(-3000));
  assert.match(mm.output(), /Not authorized to access group: A-mm2/);
});
