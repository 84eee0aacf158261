// POST /connectors/{name}/restart on a standalone worker, as Kafka's StandaloneHerder: without includeTasks and
// onlyFailed (204) it restarts the connector instance alone, so a FAILED task stays FAILED until it is restarted
// itself (KIP-745 added includeTasks for that); `?includeTasks=true&onlyFailed=true` (202 with the plan) restarts
// the failed task only. Before, a plain restart stopped and started every task of the connector as well.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { type ConnectWorker, pluginDirWith, rest, startConnectWorker } from '../helpers/connect-worker.js';
import { sleep } from '../helpers/wait.js';

let broker: BrokerProcess;
let worker: ConnectWorker;
let dir: string;

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-restart-'));
  const plugins = pluginDirWith(dir, 'offsets-connectors');
  worker = await startConnectWorker(dir, {
    'bootstrap.servers': broker.bootstrap,
    'offset.storage.file.filename': join(dir, 'connect.offsets'),
    'plugin.path': plugins,
  });
});

after(async () => {
  await worker?.stop();
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

type Status = { connector: { state: string }; tasks: { id: number; state: string }[] };

async function statusOf(name: string): Promise<Status> {
  return (await rest(worker.url, 'GET', `/connectors/${name}/status`)).body as Status;
}

/** Waits for the connector's one task to reach `state`. */
async function taskState(name: string, state: string): Promise<Status> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const status = await statusOf(name);
    if (status.tasks?.[0]?.state === state) return status;
    assert.ok(Date.now() < deadline, `${state} expected: ${JSON.stringify(status)}`);
    await sleep(100);
  }
}

test('a plain restart restarts the connector alone; includeTasks&onlyFailed restarts the failed task', async () => {
  const created = await rest(worker.url, 'POST', '/connectors', {
    name: 'flaky',
    config: { 'connector.class': 'com.example.OffsetsSourceConnector', 'task.start.failures': '1' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  await taskState('flaky', 'FAILED');

  assert.deepEqual(await rest(worker.url, 'POST', '/connectors/flaky/restart'), { status: 204, body: null });
  // The task was not restarted: had it been, its second start would have succeeded.
  await sleep(1_000);
  const after = await statusOf('flaky');
  assert.equal(after.connector.state, 'RUNNING');
  assert.equal(after.tasks[0]?.state, 'FAILED', JSON.stringify(after));

  const plan = await rest(worker.url, 'POST', '/connectors/flaky/restart?includeTasks=true&onlyFailed=true');
  assert.equal(plan.status, 202, JSON.stringify(plan.body));
  const body = plan.body as Status;
  assert.equal(body.connector.state, 'RUNNING');
  assert.equal(body.tasks[0]?.state, 'RESTARTING');
  await taskState('flaky', 'RUNNING');
  assert.equal((await rest(worker.url, 'DELETE', '/connectors/flaky')).status, 204);
});
