// Burrow (LinkedIn's consumer lag checker, Debian's burrow package) runs unchanged against a Brook broker: it reads
// the group's commits from __consumer_offsets and the partitions' end offsets with its own Kafka client (Sarama), and
// its HTTP API reports the group with the lag Brook's own view gives. Burrow 1.x keeps its coordination in
// ZooKeeper, so the test starts one for it; the broker itself needs none.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { startBroker } from '../helpers/broker-process.js';
import { freePort, startTestZooKeeper } from '../helpers/zookeeper.js';

/** Debian's burrow package (.ci/install) installs the binary under this name. */
const BURROW = '/usr/bin/Burrow';

function burrowConfig(dir: string, zookeeper: string, bootstrap: string, httpPort: number): string {
  return `[general]
pidfile="${dir}/burrow.pid"

[logging]
filename="${dir}/burrow.log"
level="info"

[zookeeper]
servers=["${zookeeper}"]
timeout=6
root-path="/burrow"

[client-profile.brook]
client-id="burrow-test"
kafka-version="2.1.0"

[cluster.brook]
class-name="kafka"
servers=["${bootstrap}"]
client-profile="brook"
topic-refresh=5
offset-refresh=1

[consumer.brook]
class-name="kafka"
cluster="brook"
servers=["${bootstrap}"]
client-profile="brook"
offsets-topic="__consumer_offsets"
start-latest=false

[httpserver.default]
address="127.0.0.1:${httpPort}"

[storage.default]
class-name="inmemory"
workers=4
intervals=10
expire-group=604800
min-distance=1
`;
}

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return { status: response.status, body: await response.json() };
  } catch (error) {
    return { status: 0, body: String(error) };
  }
}

test('Burrow reports the status and lag of a group committing to a Brook broker', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'brook-burrow-'));
  const zk = await startTestZooKeeper();
  const broker = await startBroker({ overrides: { 'num.partitions': 1 } });
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  let burrow: ChildProcess | undefined;
  try {
    await admin.createTopics([{ topic: 'burrow-orders', numPartitions: 2 }]);
    const producer = new Producer({ bootstrapServers: broker.bootstrap, lingerMs: 5 });
    await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        producer.send({ topic: 'burrow-orders', partition: i % 2, value: Buffer.from(`m${i}`) }),
      ),
    );
    await producer.close();

    const httpPort = await freePort();
    writeFileSync(join(dir, 'burrow.toml'), burrowConfig(dir, zk.connect, broker.bootstrap, httpPort));
    burrow = spawn(BURROW, ['-config-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    burrow.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
    });
    burrow.stderr!.on('data', (d: Buffer) => {
      output += d.toString();
    });
    const base = `http://127.0.0.1:${httpPort}/v3/kafka`;

    // Commits a few seconds apart, as a consumer's would be: Burrow evaluates a window of them.
    const lagBody = async (): Promise<{ status: number; body: unknown }> =>
      getJson(`${base}/brook/consumer/burrow-group/lag`);
    let last: { status: number; body: unknown } = { status: 0, body: null };
    const deadline = Date.now() + 45_000;
    let committed = 0;
    while (Date.now() < deadline) {
      committed = Math.min(committed + 5, 30);
      await admin.alterConsumerGroupOffsets('burrow-group', [
        { topic: 'burrow-orders', partition: 0, offset: committed },
        { topic: 'burrow-orders', partition: 1, offset: committed },
      ]);
      last = await lagBody();
      const status = (last.body as { status?: { status?: string; totallag?: number } }).status;
      if (last.status === 200 && status?.totallag === 100 - 2 * committed && committed === 30) break;
      await new Promise((r) => setTimeout(r, 1_000));
    }
    assert.equal(last.status, 200, `Burrow's lag answer: ${JSON.stringify(last.body)}\n${output}`);
    const status = (
      last.body as {
        status: {
          cluster: string;
          group: string;
          status: string;
          totallag: number;
          partitions: { topic: string; partition: number; current_lag: number; end: { offset: number } }[];
        };
      }
    ).status;
    assert.equal(status.cluster, 'brook');
    assert.equal(status.group, 'burrow-group');
    assert.equal(status.totallag, 40, JSON.stringify(status));
    // Offsets that advance commit after commit, lag shrinking: Burrow's rules call that a healthy consumer.
    assert.equal(status.status, 'OK', JSON.stringify(status));
    const partitions = status.partitions.map((p) => [p.topic, p.partition, p.current_lag]).sort();
    assert.deepEqual(partitions, [
      ['burrow-orders', 0, 20],
      ['burrow-orders', 1, 20],
    ]);
    const topics = await getJson(`${base}/brook/topic/burrow-orders`);
    assert.deepEqual((topics.body as { offsets: number[] }).offsets, [50, 50], 'end offsets read by Burrow');
  } finally {
    if (burrow !== undefined && burrow.exitCode === null) {
      const exited = new Promise((r) => burrow!.once('exit', r));
      burrow.kill('SIGTERM');
      const killer = setTimeout(() => burrow!.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    await admin.close();
    await broker.stop();
    await zk.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
