// `brook connect-distributed` whose herder fails after the start exits 1, as Kafka's DistributedHerder ends the
// process (Exit.exit(1)) when its work thread meets an exception it cannot retry, so that a supervisor notices a
// worker that no longer takes part in its cluster. Here the broker takes the Connect group away from the worker's
// account once it has joined; the rebalance a new connector asks for is refused with GROUP_AUTHORIZATION_FAILED.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ACL_USERS, addAcls, removeAcls, startAclBroker } from '../helpers/acl-broker.js';
import { distributedWorkerProps, rest, startConnectWorker } from '../helpers/connect-worker.js';

// Kafka's ACL codes: resource TOPIC (2), GROUP (3), CLUSTER (4); operation ALL (2).
const TOPIC = 2;
const GROUP = 3;
const CLUSTER = 4;
const ALL = 2;

test('connect-distributed exits 1 when its group is refused after the start, as Kafka', async (t) => {
  const broker = await startAclBroker();
  const dir = mkdtempSync(join(tmpdir(), 'brook-connect-herder-'));
  const wire = await broker.admin();
  await addAcls(wire, [
    { resourceType: TOPIC, resourceName: '*', principal: 'User:alice', operation: ALL },
    { resourceType: CLUSTER, resourceName: 'kafka-cluster', principal: 'User:alice', operation: ALL },
    { resourceType: GROUP, resourceName: 'refused-cluster', principal: 'User:alice', operation: ALL },
  ]);
  const worker = await startConnectWorker(
    dir,
    {
      ...distributedWorkerProps(`127.0.0.1:${broker.saslPort}`, 'refused'),
      'security.protocol': 'SASL_PLAINTEXT',
      'sasl.mechanism': 'PLAIN',
      'sasl.jaas.config':
        'org.apache.kafka.common.security.plain.PlainLoginModule required ' +
        `username="alice" password="${ACL_USERS.alice}";`,
    },
    [],
    { mode: 'distributed' },
  );
  t.after(async () => {
    await worker.kill();
    wire.close();
    await broker.broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  assert.ok((await removeAcls(wire, GROUP, 'refused-cluster')) > 0);
  await rest(worker.url, 'POST', '/connectors', {
    name: 'lines',
    config: { 'connector.class': 'FileStreamSource', file: join(dir, 'in.txt'), topic: 'lines' },
  }).catch(() => null);

  let timer: NodeJS.Timeout | undefined;
  const running = new Promise<'running'>((resolve) => {
    timer = setTimeout(() => resolve('running'), 60_000);
  });
  const code = await Promise.race([worker.exited(), running]);
  clearTimeout(timer);
  const output = worker.stderr().slice(-3000);
  assert.notEqual(code, 'running', `still running 60 s after its group was refused:\n${output}`);
  assert.equal(code, 1, output);
  assert.match(worker.stderr(), /Not authorized to access group: refused-cluster/);
});
