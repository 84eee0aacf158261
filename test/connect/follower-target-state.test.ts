// PUT /connectors/{name}/pause and /resume on a worker that does not lead: as Kafka 3.9's AbstractHerder
// (pauseConnector, resumeConnector, run on the REST thread of whichever worker got the request), the worker writes
// the target state to the config topic itself and answers 202; nothing goes to the leader. Seen on the wire: a
// proxy in front of the broker records the client id of every request, and only the follower's config store
// producer (`<group>-<client.id>-configs`) can write its records. Before the fix Brook forwarded both to the
// leader, whose config producer wrote them, and answered 409 while the group rebalanced.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  type DistributedWorker,
  startDistributed,
} from '../../src/connect/runtime/distributed/distributed.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { startBrokerBehindClientIdProxy } from '../helpers/client-id-proxy.js';
import { distributedWorkerProps, rest } from '../helpers/connect-worker.js';
import { eventually } from '../helpers/wait.js';

test('a follower writes a pause and a resume to the config topic itself and answers 202', async (t) => {
  const proxy = await startBrokerBehindClientIdProxy({
    'num.partitions': 1,
    'group.initial.rebalance.delay.ms': 0,
  });
  const dir = mkdtempSync(join(tmpdir(), 'brook-follower-pause-'));
  const workers: DistributedWorker[] = [];
  t.after(async () => {
    for (const w of workers) await w.stop().catch(() => {});
    await proxy.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const start = (clientId: string) =>
    startDistributed(distributedWorkerProps(proxy.bootstrap, 'target', { 'client.id': clientId }), () => {});
  workers.push(await start('w1'), await start('w2'));
  const [w1, w2] = workers as [DistributedWorker, DistributedWorker];
  await eventually(
    async () => w1.herder.leaderUrl() !== null && w1.herder.leaderUrl() === w2.herder.leaderUrl(),
    30_000,
    'one leader',
  );
  const leaderIsW1 = w1.herder.leaderUrl()!.includes(w1.workerId);
  const [follower, followerId] = leaderIsW1 ? [w2, 'w2'] : [w1, 'w1'];
  const followerConfigs = `target-cluster-${followerId}-configs`;

  const input = join(dir, 'in.txt');
  writeFileSync(input, 'a\n');
  const created = await rest(follower.restUrl, 'POST', '/connectors', {
    name: 'src',
    config: { 'connector.class': 'FileStreamSource', file: input, topic: 'target-lines', 'tasks.max': '1' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const state = async () =>
    (
      (await rest(follower.restUrl, 'GET', '/connectors/src/status')).body as {
        connector?: { state: string };
      }
    ).connector?.state;
  await eventually(async () => (await state()) === 'RUNNING', 30_000, 'src running');
  assert.ok(!proxy.clientIds(ApiKey.PRODUCE).has(followerConfigs), 'the leader wrote the connector config');

  const paused = await rest(follower.restUrl, 'PUT', '/connectors/src/pause');
  assert.deepEqual(paused, { status: 202, body: null });
  assert.ok(
    proxy.clientIds(ApiKey.PRODUCE).has(followerConfigs),
    `the follower's config producer wrote the target state; producers: ${[...proxy.clientIds(ApiKey.PRODUCE)].join(', ')}`,
  );
  await eventually(async () => (await state()) === 'PAUSED', 30_000, 'src paused');

  const resumed = await rest(follower.restUrl, 'PUT', '/connectors/src/resume');
  assert.deepEqual(resumed, { status: 202, body: null });
  await eventually(async () => (await state()) === 'RUNNING', 30_000, 'src running again');
});
