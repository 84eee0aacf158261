// Protocol negotiation in a Connect group: a worker offering only the eager protocol ("default", connect.protocol
// = eager) and one offering sessioned, compatible and default agree on "default"; every rebalance then hands all
// work out afresh, and the connectors and their tasks run spread over both workers.

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
import { sleep } from '../helpers/wait.js';

let broker: BrokerProcess;
let dir: string;
const workers: DistributedWorker[] = [];
const logs: string[][] = [];

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-eager-'));
});

after(async () => {
  for (const w of workers) await w.stop().catch(() => {});
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

function start(protocol: string): Promise<DistributedWorker> {
  const lines: string[] = [];
  logs.push(lines);
  return startDistributed(
    distributedWorkerProps(broker.bootstrap, 'eager', {
      'connect.protocol': protocol,
      'key.converter': undefined,
      'offset.flush.interval.ms': undefined,
    }),
    (l) => lines.push(l),
  );
}

test('an eager worker and a sessioned one agree on the eager protocol and share the work', async () => {
  // The eager worker forms the group first: a sessioned worker alone would rightly join with "sessioned" (the
  // group's only member offers it), which started together they sometimes did.
  workers.push(await start('eager'));
  const joined = Date.now() + 30_000;
  while (!logs[0]!.some((l) => /Joined generation/.test(l))) {
    assert.ok(Date.now() < joined, `the eager worker never joined: ${logs[0]!.slice(-10).join('\n')}`);
    await sleep(100);
  }
  workers.push(await start('sessioned'));
  const [w1, w2] = workers as [DistributedWorker, DistributedWorker];
  for (let i = 0; i < 2; i++) {
    writeFileSync(join(dir, `in-${i}.txt`), 'x\n');
    const r = await rest(w2.restUrl, 'POST', '/connectors', {
      name: `eager-${i}`,
      config: { 'connector.class': 'FileStreamSource', file: join(dir, `in-${i}.txt`), topic: `eager-${i}` },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  const owners = new Set<string>();
  const deadline = Date.now() + 30_000;
  for (;;) {
    owners.clear();
    let running = 0;
    for (const name of ['eager-0', 'eager-1']) {
      const s = await rest(w1.restUrl, 'GET', `/connectors/${name}/status`);
      const body = s.body as {
        connector: { state: string; worker_id: string };
        tasks: { state: string; worker_id: string }[];
      };
      if (s.status !== 200 || body.connector.state !== 'RUNNING' || body.tasks[0]?.state !== 'RUNNING')
        continue;
      running++;
      owners.add(body.connector.worker_id);
      owners.add(body.tasks[0]!.worker_id);
    }
    if (running === 2 && owners.size === 2) break;
    if (Date.now() > deadline)
      throw new Error(`not running on both workers: ${logs.flat().slice(-20).join('\n')}`);
    await sleep(200);
  }
  assert.deepEqual([...owners].sort(), [w1.workerId, w2.workerId].sort());
  // Both workers joined with the protocol they have in common.
  for (const lines of logs)
    assert.ok(
      lines.some((l) => /Joined generation \d+ \(default\)/.test(l)),
      lines.join('\n'),
    );
  const others = logs.flat().filter((l) => /\((sessioned|compatible)\)/.test(l));
  assert.deepEqual(others, [], 'no join chose a protocol the eager worker does not offer');
});
