// Requests made while a distributed worker has read a config change that needs a rebalance and not yet applied it
// (Kafka's DistributedHerder.checkRebalanceNeeded, true from a new connector, a removed one or new task configs
// until the herder's loop asks for the rebalance): reads of a connector's info, config and task configs fail with
// Kafka's 500 "Request cannot be completed because a rebalance is expected" (its RebalanceNeededException reaches
// the exception mapper), restarts and offset changes with the 409 "... stale configuration ..." Kafka's
// HerderRequestHandler gives them. The connector list, statuses and creates are not checked, as in Kafka. The
// worker's loop is held (a fault hook) right after the new connector's config record was read.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  type DistributedWorker,
  startDistributed,
} from '../../src/connect/runtime/distributed/distributed.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { distributedWorkerProps, rest } from '../helpers/connect-worker.js';
import { eventually } from '../helpers/wait.js';

const EXPECTED = 'Request cannot be completed because a rebalance is expected';
const STALE =
  'Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)';

let broker: BrokerProcess;
let dir: string;
let worker: DistributedWorker | undefined;

/** While set, the worker's loop waits in the hook until it is resolved. */
let hold: { entered: () => void; release: Promise<void> } | null = null;

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-pending-'));
});

after(async () => {
  await worker?.stop().catch(() => {});
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

test('a request made while a rebalance is expected gets Kafka 500 (reads) or 409 (restarts, offsets)', async () => {
  worker = await startDistributed(distributedWorkerProps(broker.bootstrap, 'pending'), () => {}, {
    beforeConfigEvents: async () => {
      const h = hold;
      if (h === null) return;
      hold = null;
      h.entered();
      await h.release;
    },
  });
  const url = worker.restUrl;
  const input = join(dir, 'in.txt');
  writeFileSync(input, 'a\nb\n');
  const config = {
    'connector.class': 'FileStreamSource',
    file: input,
    topic: 'pending-lines',
    'tasks.max': '1',
  };
  assert.equal((await rest(url, 'POST', '/connectors', { name: 'src', config })).status, 201);
  await eventually(
    async () => {
      const s = await rest(url, 'GET', '/connectors/src/status');
      const body = s.body as { tasks?: { state: string }[] } | null;
      return s.status === 200 && body?.tasks?.[0]?.state === 'RUNNING';
    },
    30_000,
    'src and its task running',
  );

  let release: () => void = () => {};
  const entered = new Promise<void>((entered) => {
    hold = { entered, release: new Promise<void>((r) => (release = r)) };
  });
  try {
    // A new connector: created (Kafka checks nothing there), then the loop holds with its record pending.
    const other = { ...config, file: join(dir, 'other.txt'), topic: 'pending-other' };
    assert.equal((await rest(url, 'POST', '/connectors', { name: 'other', config: other })).status, 201);
    await entered;

    for (const path of [
      '/connectors/src',
      '/connectors/src/config',
      '/connectors/src/tasks',
      '/connectors/src/tasks-config',
    ])
      assert.deepEqual(
        await rest(url, 'GET', path),
        { status: 500, body: { error_code: 500, message: EXPECTED } },
        path,
      );
    for (const [method, path] of [
      ['POST', '/connectors/src/restart'],
      ['POST', '/connectors/src/restart?includeTasks=true'],
      ['POST', '/connectors/src/tasks/0/restart'],
      ['DELETE', '/connectors/src/offsets'],
      ['PATCH', '/connectors/src/offsets'],
      // Checked before the connector is looked up, as Kafka.
      ['POST', '/connectors/missing/restart'],
    ] as const) {
      const body =
        method === 'PATCH' ? { offsets: [{ partition: { filename: input }, offset: null }] } : undefined;
      assert.deepEqual(
        await rest(url, method, path, body),
        { status: 409, body: { error_code: 409, message: STALE } },
        `${method} ${path}`,
      );
    }
    // Not checked by Kafka: the list, statuses.
    assert.deepEqual(await rest(url, 'GET', '/connectors'), { status: 200, body: ['other', 'src'] });
    assert.equal((await rest(url, 'GET', '/connectors/src/status')).status, 200);
  } finally {
    release();
  }
  // Once the loop has applied the record (and asked for the rebalance), the same requests are answered.
  await eventually(
    async () => (await rest(url, 'GET', '/connectors/src')).status === 200,
    30_000,
    'info again',
  );
  assert.equal((await rest(url, 'GET', '/connectors/src/tasks')).status, 200);
  assert.equal((await rest(url, 'POST', '/connectors/src/restart')).status, 204);
});
