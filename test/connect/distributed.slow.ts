// `brook connect-distributed` end to end: three worker processes against one broker share six FileStream
// connectors (three sources appending lines to topics, three sinks writing them to files). Connectors and tasks
// spread over the workers; REST changes made through any worker (create, config update, pause, resume) apply
// on every worker; the internal topics hold Kafka Connect's record formats; a worker killed with SIGKILL has
// its work restarted on the survivors after scheduled.rebalance.max.delay.ms, with no line lost; the worker
// started again gets work again; when the leader is killed, its work moves and the new leader takes changes.

import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Consumer } from '../../src/client/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { type ConnectWorker, rest, startConnectWorker } from '../helpers/connect-worker.js';
import { sleep } from '../helpers/wait.js';

const SOURCES = 3;
const DELAY_MS = 4000;

let broker: BrokerProcess;
let dir: string;
const workers: ConnectWorker[] = [];
const killed = new Set<ConnectWorker>();

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-dist-'));
});

after(async () => {
  for (const w of workers) await w.kill().catch(() => {});
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** Polls an async condition every 250 ms until it holds; fails after timeoutMs with describe()'s text. */
async function eventually(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  describe: () => string | Promise<string> = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting:\n${await describe()}`);
    await sleep(250);
  }
}

function lines(path: string): string[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}

function workerProps(): Record<string, string | number> {
  return {
    'bootstrap.servers': broker.bootstrap,
    'group.id': 'connect-cluster',
    'config.storage.topic': 'connect-configs',
    'offset.storage.topic': 'connect-offsets',
    'status.storage.topic': 'connect-status',
    'config.storage.replication.factor': 1,
    'offset.storage.replication.factor': 1,
    'status.storage.replication.factor': 1,
    'offset.storage.partitions': 5,
    'status.storage.partitions': 3,
    'session.timeout.ms': 6000,
    'heartbeat.interval.ms': 1000,
    'scheduled.rebalance.max.delay.ms': DELAY_MS,
    'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'offset.flush.interval.ms': 500,
  };
}

function startWorker(): Promise<ConnectWorker> {
  return startConnectWorker(dir, workerProps(), [], { mode: 'distributed' });
}

interface Status {
  name: string;
  connector: { state: string; worker_id: string };
  tasks: { id: number; state: string; worker_id: string }[];
}

async function status(url: string, name: string): Promise<Status | null> {
  const r = await rest(url, 'GET', `/connectors/${name}/status`).catch(() => null);
  return r?.status === 200 ? (r.body as Status) : null;
}

/** Every connector and its one task in `state`, as the worker at `url` reports them. */
async function allIn(url: string, names: string[], state: string, where?: (workerId: string) => boolean) {
  for (const name of names) {
    const s = await status(url, name);
    if (s === null || s.connector.state !== state || s.tasks.length !== 1) return false;
    if (s.tasks.some((t) => t.state !== state)) return false;
    if (where && (!where(s.connector.worker_id) || s.tasks.some((t) => !where(t.worker_id)))) return false;
  }
  return true;
}

function workerIdOf(w: ConnectWorker): string {
  return w.url.replace(/^http:\/\//, '');
}

test('three distributed workers share connectors, survive a SIGKILL of a member and of the leader without losing a line, and take a returning worker back', async () => {
  const names = { sources: [] as string[], sinks: [] as string[] };
  for (let i = 0; i < SOURCES; i++) {
    writeFileSync(join(dir, `in-${i}.txt`), '');
    names.sources.push(`source-${i}`);
    names.sinks.push(`sink-${i}`);
  }
  const started = await Promise.all([startWorker(), startWorker(), startWorker()]);
  workers.push(...started);
  const [a, b, c] = started as [ConnectWorker, ConnectWorker, ConnectWorker];

  // Lines keep arriving in the source files for the whole test.
  let written = 0;
  const writer = setInterval(() => {
    for (let i = 0; i < SOURCES; i++) appendFileSync(join(dir, `in-${i}.txt`), `line-${i}-${written}\n`);
    written++;
  }, 40);

  try {
    // Created through two different workers: the one that is not the leader forwards to it.
    for (let i = 0; i < SOURCES; i++) {
      const r = await rest(a.url, 'POST', '/connectors', {
        name: `source-${i}`,
        config: {
          'connector.class': 'FileStreamSource',
          file: join(dir, `in-${i}.txt`),
          topic: `lines-${i}`,
          'tasks.max': '1',
        },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      const s = await rest(b.url, 'POST', '/connectors', {
        name: `sink-${i}`,
        config: {
          'connector.class': 'FileStreamSink',
          file: join(dir, `out-${i}.txt`),
          topics: `lines-${i}`,
          'tasks.max': '1',
        },
      });
      assert.equal(s.status, 201, JSON.stringify(s.body));
    }
    const all = [...names.sources, ...names.sinks];
    const dup = await rest(c.url, 'POST', '/connectors', {
      name: 'sink-0',
      config: { 'connector.class': 'FileStreamSink', topics: 'x' },
    });
    assert.equal(dup.status, 409);
    assert.deepEqual(dup.body, { error_code: 409, message: 'Connector sink-0 already exists' });

    await eventually(
      async () => (await allIn(c.url, all, 'RUNNING')) && (await allIn(a.url, all, 'RUNNING')),
      60_000,
      async () => JSON.stringify(await Promise.all(all.map((n) => status(a.url, n)))),
    );
    // Spread: every worker runs connectors or tasks.
    const owners = new Set<string>();
    for (const n of all) {
      const s = (await status(b.url, n))!;
      owners.add(s.connector.worker_id);
      for (const t of s.tasks) owners.add(t.worker_id);
    }
    assert.deepEqual([...owners].sort(), started.map(workerIdOf).sort());
    assert.deepEqual((await rest(c.url, 'GET', '/connectors')).body, [...all].sort());

    // A config change through the third worker applies everywhere: sink-0 writes to a new file.
    const changed = await rest(c.url, 'PUT', '/connectors/sink-0/config', {
      'connector.class': 'FileStreamSink',
      file: join(dir, 'out-0b.txt'),
      topics: 'lines-0',
      'tasks.max': '1',
    });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    for (const w of started) {
      await eventually(async () => {
        const t = await rest(w.url, 'GET', '/connectors/sink-0/tasks');
        return (t.body as { config: Record<string, string> }[])[0]?.config.file === join(dir, 'out-0b.txt');
      }, 30_000);
      assert.equal(
        ((await rest(w.url, 'GET', '/connectors/sink-0/config')).body as Record<string, string>).file,
        join(dir, 'out-0b.txt'),
      );
    }
    await eventually(() => lines(join(dir, 'out-0b.txt')).length > 0, 30_000);

    // Pause through one worker, resume through another: every status follows.
    assert.equal((await rest(b.url, 'PUT', '/connectors/source-1/pause')).status, 202);
    await eventually(() => allIn(a.url, ['source-1'], 'PAUSED'), 30_000);
    assert.equal((await rest(c.url, 'PUT', '/connectors/source-1/resume')).status, 202);
    await eventually(() => allIn(b.url, ['source-1'], 'RUNNING'), 30_000);

    // The internal topics hold Kafka Connect's records.
    const configRecords = await readAll('connect-configs');
    const byKey = new Map(configRecords.map((r) => [r.key, r.value]));
    assert.deepEqual(JSON.parse(byKey.get('connector-source-0')!).properties.topic, 'lines-0');
    assert.deepEqual(JSON.parse(byKey.get('commit-source-0')!), { tasks: 1 });
    assert.equal(JSON.parse(byKey.get('task-source-0-0')!).properties.topic, 'lines-0');
    assert.deepEqual(JSON.parse(byKey.get('target-state-source-1')!), {
      state: 'STARTED',
      'state.v2': 'STARTED',
    });
    const statusRecords = await readAll('connect-status');
    const taskStatus = statusRecords.filter((r) => r.key === 'status-task-source-0-0').at(-1)!;
    const parsed = JSON.parse(taskStatus.value!) as Record<string, unknown>;
    assert.equal(parsed.state, 'RUNNING');
    assert.equal(typeof parsed.worker_id, 'string');
    assert.equal(typeof parsed.generation, 'number');
    assert.ok('trace' in parsed);
    const offsetRecords = await readAll('connect-offsets');
    assert.ok(
      offsetRecords.some((r) => r.key === JSON.stringify(['source-2', { filename: join(dir, 'in-2.txt') }])),
      JSON.stringify(offsetRecords.slice(0, 3)),
    );

    // Kill -9 a worker that runs tasks and does not lead.
    const leaderUrl = leaderOf(started);
    let victim: ConnectWorker | undefined;
    for (const w of started) if (w.url !== leaderUrl && (await runsTasks(a.url, w, all))) victim ??= w;
    assert.ok(victim !== undefined, 'a non-leader worker with tasks');
    const victimId = workerIdOf(victim);
    const survivors = started.filter((w) => w !== victim);
    await victim.kill();
    killed.add(victim);
    const killedAt = Date.now();
    await eventually(
      () => allIn(survivors[0]!.url, all, 'RUNNING', (id) => id !== victimId),
      90_000,
      async () => JSON.stringify(await Promise.all(all.map((n) => status(survivors[0]!.url, n)))),
    );
    // The leader waited for the worker to come back before moving its work (KIP-415).
    assert.ok(Date.now() - killedAt >= DELAY_MS, 'work moved before the scheduled rebalance delay');
    assert.match(survivors.map((w) => w.stderr()).join('\n'), /scheduled rebalance in \d+ ms/);

    // No line lost: everything written reaches a sink file (duplicates allowed: at least once).
    clearInterval(writer);
    const total = written;
    for (let i = 0; i < SOURCES; i++) {
      const outFiles =
        i === 0 ? [join(dir, 'out-0.txt'), join(dir, 'out-0b.txt')] : [join(dir, `out-${i}.txt`)];
      await eventually(
        () => {
          const got = new Set(outFiles.flatMap(lines));
          for (let n = 0; n < total; n++) if (!got.has(`line-${i}-${n}`)) return false;
          return true;
        },
        60_000,
        () => {
          const got = new Set(outFiles.flatMap(lines));
          const missing = [];
          for (let n = 0; n < total && missing.length < 5; n++)
            if (!got.has(`line-${i}-${n}`)) missing.push(n);
          return `source ${i}: ${total} written, missing e.g. ${missing.join(',')}`;
        },
      );
    }

    // The worker comes back and gets work again.
    const back = await startWorker();
    workers.push(back);
    const backId = workerIdOf(back);
    await eventually(
      async () => {
        for (const n of all) {
          const s = await status(back.url, n);
          if (
            s?.connector.worker_id === backId ||
            s?.tasks.some((t) => t.worker_id === backId && t.state === 'RUNNING')
          )
            return true;
        }
        return false;
      },
      60_000,
      () => back.stderr().slice(-3000),
    );
    await eventually(() => allIn(back.url, all, 'RUNNING'), 60_000);

    // The leader dies: a new leader (without the old one's view) hands its work out at once, and config
    // changes through the remaining workers reach the new leader.
    const live = [...survivors, back];
    const oldLeader = live.find((w) => w.url === leaderOf(live))!;
    assert.ok(oldLeader !== undefined, 'a leader among the live workers');
    const oldLeaderId = workerIdOf(oldLeader);
    const rest2 = live.filter((w) => w !== oldLeader);
    await oldLeader.kill();
    killed.add(oldLeader);
    await eventually(
      () => allIn(rest2[0]!.url, all, 'RUNNING', (id) => id !== oldLeaderId),
      90_000,
      async () => JSON.stringify(await Promise.all(all.map((n) => status(rest2[0]!.url, n)))),
    );
    assert.equal((await rest(rest2[1]!.url, 'PUT', '/connectors/source-2/pause')).status, 202);
    await eventually(() => allIn(rest2[0]!.url, ['source-2'], 'PAUSED'), 30_000);
  } finally {
    clearInterval(writer);
  }
  // The live workers stop cleanly on SIGTERM (exit 0).
  for (const w of workers.filter((x) => x.stderr().length > 0)) {
    const code = await w.stop();
    assert.ok(code === 0 || killed.has(w), `a worker exited with ${code}`);
  }
});

function leaderOf(ws: ConnectWorker[]): string | undefined {
  // Each worker logs its role at every generation; the last line of the worker that led last names it.
  let best: { generation: number; url: string } | undefined;
  for (const w of ws) {
    for (const m of w.stderr().matchAll(/Joined generation (\d+) \(\w+\) as leader/g)) {
      const generation = Number(m[1]);
      if (best === undefined || generation > best.generation) best = { generation, url: w.url };
    }
  }
  return best?.url;
}

async function runsTasks(url: string, w: ConnectWorker, names: string[]): Promise<boolean> {
  for (const n of names)
    if ((await status(url, n))?.tasks.some((t) => t.worker_id === workerIdOf(w))) return true;
  return false;
}

async function readAll(topic: string): Promise<{ key: string | null; value: string | null }[]> {
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap });
  const { Admin } = await import('../../src/client/index.js');
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  try {
    const [d] = await admin.describeTopics([topic]);
    const tps = d!.partitions.map((p) => ({ topic, partition: p.partition }));
    const ends = await consumer.endOffsets(tps);
    consumer.assign(tps);
    await consumer.seekToBeginning(tps);
    const out: { key: string | null; value: string | null }[] = [];
    const need = ends.reduce((n, e) => n + e.offset, 0);
    const deadline = Date.now() + 15_000;
    let seen = 0;
    while (seen < need && Date.now() < deadline) {
      for (const r of await consumer.poll(500)) {
        seen++;
        out.push({ key: r.key?.toString('utf8') ?? null, value: r.value?.toString('utf8') ?? null });
      }
    }
    return out;
  } finally {
    await consumer.close();
    await admin.close();
  }
}
