// The console against a three-broker cluster on ZooKeeper: a topic created with replication factor 3 shows three
// replicas in sync with a size on each broker, every broker online with one controller; after a broker is killed,
// the brokers page lists the two left and the topic's partitions show as under-replicated, led elsewhere.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { type ConsoleProcess, call, startConsole } from './console-process.js';

async function until<T>(
  what: string,
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await read();
  while (!ok(last)) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 200));
    last = await read();
  }
  return last;
}

interface Partition {
  partition: number;
  leader: number;
  replicas: number[];
  isr: number[];
  sizeBytes: Record<string, number>;
}

describe('console against a three-broker cluster', () => {
  let cluster: TestCluster | undefined;
  let web: ConsoleProcess | undefined;

  before(async () => {
    // A killed broker's ZooKeeper session ends after 4 s rather than Kafka's 18 s: the controller notices sooner.
    cluster = await startCluster({ brokers: 3, overrides: { 'zookeeper.session.timeout.ms': 4000 } });
    web = await startConsole(['--bootstrap-server', cluster.bootstrap]);
  });
  after(async () => {
    await web?.stop();
    await cluster?.stop();
  });

  test('replicas, ISR and sizes per broker; a killed broker leaves its partitions under-replicated', async () => {
    const brokers = await until(
      'three brokers online',
      () => call(web!.url, 'GET', '/cluster'),
      (a) => a.status === 200 && a.body.brokers.length === 3,
    );
    assert.deepEqual(
      brokers.body.brokers.map((b: { state: string }) => b.state),
      ['online', 'online', 'online'],
    );
    assert.equal(brokers.body.brokers.filter((b: { isController: boolean }) => b.isController).length, 1);

    const created = await call(web!.url, 'POST', '/topics', {
      name: 'replicated',
      partitions: 3,
      replicationFactor: 3,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const produced = await call(web!.url, 'POST', '/topics/replicated/messages', {
      partition: 0,
      value: 'x'.repeat(500),
    });
    assert.equal(produced.status, 201, JSON.stringify(produced.body));
    const topic = await until(
      'every replica in sync and sized',
      () => call(web!.url, 'GET', '/topics/replicated'),
      (a) =>
        a.status === 200 &&
        a.body.partitions.length === 3 &&
        a.body.partitions.every(
          (p: Partition) => p.isr.length === 3 && Object.keys(p.sizeBytes).length === 3,
        ) &&
        Object.values(a.body.partitions[0].sizeBytes as Record<string, number>).every((n) => n > 0),
    );
    for (const p of topic.body.partitions as Partition[]) {
      assert.deepEqual([...p.replicas].sort(), [0, 1, 2]);
      assert.ok(p.replicas.includes(p.leader));
    }

    await cluster!.brokers[2]!.kill();
    const after = await until(
      'the topic under-replicated without broker 2',
      () => call(web!.url, 'GET', '/topics'),
      (a) =>
        a.status === 200 &&
        a.body.find((t: { name: string }) => t.name === 'replicated')?.underReplicated === 3,
    );
    assert.equal(after.body.find((t: { name: string }) => t.name === 'replicated').offline, 0);
    const left = await until(
      'two brokers listed',
      () => call(web!.url, 'GET', '/cluster'),
      (a) => a.status === 200 && a.body.brokers.length === 2,
    );
    assert.deepEqual(
      left.body.brokers.map((b: { nodeId: number }) => b.nodeId),
      [0, 1],
    );
    const partitions = (await call(web!.url, 'GET', '/topics/replicated')).body.partitions as Partition[];
    for (const p of partitions) {
      assert.ok(!p.isr.includes(2), JSON.stringify(p));
      assert.notEqual(p.leader, 2);
    }
  });
});
