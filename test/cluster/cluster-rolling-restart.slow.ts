// `brook cluster restart --rolling` on a cluster from `brook cluster up --racks a,b,c`: every broker is restarted
// once, one at a time and the controller last, every record written before is still there and no partition is
// left under-replicated; with a broker down the restart aborts before touching any other broker.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { run } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { freePort } from '../helpers/zookeeper.js';

const BIN = resolve(import.meta.dirname, '../../../bin/brook');
const TOPIC = 'rolled';
const RECORDS = 30;

function portFree(port: number): Promise<boolean> {
  return new Promise((r) => {
    const server = net.createServer();
    server.once('error', () => r(false));
    server.listen(port, '127.0.0.1', () => server.close(() => r(true)));
  });
}

async function freeRun(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const checks = await Promise.all(Array.from({ length: count }, (_, i) => portFree(base + i)));
    if (checks.every(Boolean)) return base;
  }
  throw new Error('no free port range');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('brook cluster restart --rolling', () => {
  it('restarts each broker once, the controller last, losing nothing; aborts while a broker is down', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-rolling-'));
    const base = await freeRun(3);
    const zkPort = await freePort();
    const where = ['--dir', dir];
    const pidsOf = () =>
      new Map(
        (JSON.parse(readFileSync(join(dir, 'brokers.json'), 'utf8')) as { id: number; pid: number }[]).map(
          (b) => [b.id, b.pid],
        ),
      );
    let everyPid: number[] = [];
    const bootstrap = [0, 1, 2].map((i) => `127.0.0.1:${base + i}`).join(',');
    const admin = new Admin({ bootstrapServers: bootstrap, clientId: 'rolling-test' });
    try {
      const up = await run(
        process.execPath,
        [
          BIN,
          'cluster',
          'up',
          '--racks',
          'a,b,c',
          '--base-port',
          String(base),
          '--zookeeper-port',
          String(zkPort),
          ...where,
        ],
        { timeoutMs: 90_000 },
      );
      assert.equal(up.code, 0, `${up.stdout}\n${up.stderr}`);
      const first = pidsOf();
      everyPid = [...first.values()];
      await waitFor('three brokers registered', async () =>
        (await admin.describeCluster()).brokers.length === 3 ? true : undefined,
      );
      const created = await admin.createTopics([{ topic: TOPIC, numPartitions: 3, replicationFactor: 3 }]);
      assert.equal(created[0]!.error, null);
      await waitFor('every replica in sync', async () => {
        const [t] = await admin.describeTopics([TOPIC]);
        return t!.partitions.length === 3 && t!.partitions.every((p) => p.isr.length === 3)
          ? true
          : undefined;
      });
      const producer = new Producer({ bootstrapServers: bootstrap, acks: -1 });
      try {
        for (let i = 0; i < RECORDS; i++)
          await producer.send({ topic: TOPIC, partition: i % 3, value: Buffer.from(`v${i}`) });
      } finally {
        await producer.close();
      }
      const controllerId = (await admin.describeCluster()).controllerId;

      const rolled = await run(process.execPath, [BIN, 'cluster', 'restart', '--rolling', ...where], {
        timeoutMs: 300_000,
      });
      assert.equal(rolled.code, 0, `${rolled.stdout}\n${rolled.stderr}`);
      assert.match(rolled.stdout, /rolling restart done/);
      const order = [...rolled.stdout.matchAll(/^broker (\d+) restarted/gm)].map((m) => Number(m[1]));
      assert.deepEqual([...order].sort(), [0, 1, 2], rolled.stdout);
      assert.equal(order[2], controllerId, 'the controller goes last');
      const second = pidsOf();
      everyPid.push(...second.values());
      for (const [id, pid] of second) {
        assert.notEqual(pid, first.get(id), `broker ${id} is a new process`);
        assert.ok(alive(pid));
        assert.ok(!alive(first.get(id)!), `broker ${id}'s old process ended`);
      }
      const consumer = new Consumer({ bootstrapServers: bootstrap, autoOffsetReset: 'earliest' });
      const seen = new Set<string>();
      try {
        consumer.assign([0, 1, 2].map((partition) => ({ topic: TOPIC, partition })));
        const deadline = Date.now() + 30_000;
        while (seen.size < RECORDS && Date.now() < deadline)
          for (const r of await consumer.poll(500)) seen.add(r.value!.toString());
      } finally {
        await consumer.close();
      }
      assert.equal(seen.size, RECORDS, 'every record is still there');

      // Broker 1 down: the cluster is unhealthy, and the restart stops before restarting anything.
      process.kill(second.get(1)!, 'SIGTERM');
      await waitFor('broker 1 stopped', async () => (alive(second.get(1)!) ? undefined : true), 60_000);
      const refused = await run(
        process.execPath,
        [BIN, 'cluster', 'restart', '--rolling', '--timeout-ms', '2000', ...where],
        { timeoutMs: 60_000 },
      );
      assert.equal(refused.code, 1, refused.stdout);
      assert.match(refused.stderr, /aborting the rolling restart before broker \d+: broker 1 not registered/);
      assert.doesNotMatch(refused.stdout, /controlled shutdown/);
      for (const id of [0, 2]) assert.equal(pidsOf().get(id), second.get(id), `broker ${id} untouched`);
    } finally {
      await admin.close();
      await run(process.execPath, [BIN, 'cluster', 'down', ...where], { timeoutMs: 90_000 });
      for (const pid of everyPid) if (alive(pid)) process.kill(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
