// Exactly-once source (KIP-618) through the wire, with `brook connect-distributed` processes: two workers with
// exactly.once.source.support=enabled run a FileStreamSource (small batches, a transaction per poll) on a file
// the test keeps appending to; the worker running the task is killed with SIGKILL in the middle of the stream.
// The task restarts on the survivor from the offsets of the last committed transaction (the open one is aborted
// when the new task's producer takes the transactional id over), and read_committed consumers, Brook's and kcat,
// see every line exactly once and in order.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Consumer } from '../../src/client/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { type ConnectWorker, rest, startConnectWorker } from '../helpers/connect-worker.js';
import { sleep } from '../helpers/wait.js';

const LINES = 3000;
let broker: BrokerProcess;
let dir: string;
const workers: ConnectWorker[] = [];

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-eos-slow-'));
});

after(async () => {
  for (const w of workers) await w.kill().catch(() => {});
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function eventually(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

async function readCommitted(topic: string): Promise<string[]> {
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap, isolationLevel: 'read_committed' });
  try {
    const tp = { topic, partition: 0 };
    consumer.assign([tp]);
    await consumer.seekToBeginning([tp]);
    const [end] = await consumer.endOffsets([tp]);
    const out: string[] = [];
    const deadline = Date.now() + 30_000;
    while ((await consumer.position(tp)) < end!.offset && Date.now() < deadline)
      for (const r of await consumer.poll(500)) out.push(r.value!.toString());
    return out;
  } finally {
    await consumer.close();
  }
}

function startWorker(): Promise<ConnectWorker> {
  return startConnectWorker(
    dir,
    {
      'bootstrap.servers': broker.bootstrap,
      'group.id': 'eos-kill',
      'config.storage.topic': 'eos-kill-configs',
      'offset.storage.topic': 'eos-kill-offsets',
      'status.storage.topic': 'eos-kill-status',
      'config.storage.replication.factor': 1,
      'offset.storage.replication.factor': 1,
      'status.storage.replication.factor': 1,
      'offset.storage.partitions': 3,
      'status.storage.partitions': 2,
      'session.timeout.ms': 6000,
      'heartbeat.interval.ms': 1000,
      'scheduled.rebalance.max.delay.ms': 3000,
      'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
      'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
      'exactly.once.source.support': 'enabled',
    },
    [],
    { mode: 'distributed' },
  );
}

test('a worker killed -9 mid-stream: read_committed consumers see every source line exactly once', async () => {
  workers.push(await startWorker());
  workers.push(await startWorker());
  const input = join(dir, 'input.txt');
  writeFileSync(input, '');
  const created = await rest(workers[0]!.url, 'POST', '/connectors', {
    name: 'eos-file',
    config: {
      'connector.class': 'FileStreamSource',
      file: input,
      topic: 'eos-lines',
      'tasks.max': '1',
      'batch.size': '7',
      'exactly.once.support': 'required',
      'transaction.boundary': 'poll',
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));

  // The writer: the file grows all along, before, during and after the kill.
  let written = 0;
  const writer = (async () => {
    while (written < LINES) {
      let chunk = '';
      for (let i = 0; i < 10 && written < LINES; i++) chunk += `line-${written++}\n`;
      appendFileSync(input, chunk);
      await sleep(50);
    }
  })();

  await eventually(async () => (await readCommitted('eos-lines')).length >= 500, 90_000, '500 lines');
  const status = (await rest(workers[0]!.url, 'GET', '/connectors/eos-file/status')).body as {
    tasks: { worker_id: string; state: string }[];
  };
  const owner = status.tasks[0]!.worker_id;
  const victim = workers.find((w) => w.url.endsWith(owner.slice(owner.lastIndexOf(':'))))!;
  assert.ok(victim !== undefined, `the worker ${owner} runs the task`);
  await victim.kill();
  const survivor = workers.find((w) => w !== victim)!;
  await writer;

  await eventually(
    async () => (await readCommitted('eos-lines')).length >= LINES,
    180_000,
    `all ${LINES} lines after the kill`,
  );
  await sleep(2000);
  const expected = [...Array(LINES).keys()].map((i) => `line-${i}`);
  assert.deepEqual(await readCommitted('eos-lines'), expected);
  const kcat = execFileSync(
    'kcat',
    [
      '-C',
      '-b',
      broker.bootstrap,
      '-t',
      'eos-lines',
      '-X',
      'isolation.level=read_committed',
      '-o',
      'beginning',
      '-e',
      '-q',
      '-f',
      '%s\\n',
    ],
    { encoding: 'utf8', timeout: 60_000 },
  )
    .split('\n')
    .filter((l) => l !== '');
  assert.deepEqual(kcat, expected);
  const after = (await rest(survivor.url, 'GET', '/connectors/eos-file/status')).body as {
    tasks: { worker_id: string; state: string }[];
  };
  assert.equal(after.tasks[0]!.state, 'RUNNING');
  assert.notEqual(after.tasks[0]!.worker_id, owner);
});
