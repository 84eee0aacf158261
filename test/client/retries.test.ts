// Retries against a broker that goes away: the producer keeps records buffered while the broker restarts (same
// port, same data), retries with backoff, and the idempotent sequences leave exactly one copy of each record in
// send order. The consumer resumes fetching after the restart.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';

test('records sent across a broker restart arrive once each, in order', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'brook-client-retry-'));
  let broker: BrokerProcess | null = await startBroker({ dataDir, keepDataDir: true });
  const port = broker.port;
  const bootstrap = broker.bootstrap;
  const producer = new Producer({
    bootstrapServers: bootstrap,
    lingerMs: 2,
    retryBackoffMs: 50,
    retryBackoffMaxMs: 300,
  });
  const consumer = new Consumer({
    bootstrapServers: bootstrap,
    autoOffsetReset: 'earliest',
    retryBackoffMs: 50,
  });
  try {
    const admin = new Admin({ bootstrapServers: bootstrap });
    assert.equal((await admin.createTopics([{ topic: 'restart', numPartitions: 1 }]))[0]!.error, null);
    await admin.close();
    const first = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        producer.send({ topic: 'restart', value: Buffer.from(String(i)) }),
      ),
    );
    assert.equal(first[99]!.offset, 99);
    await broker.stop();
    broker = null;
    // Sent while the broker is down: they wait in the accumulator and go out once it is back.
    const during = Array.from({ length: 100 }, (_, i) =>
      producer.send({ topic: 'restart', value: Buffer.from(String(100 + i)) }),
    );
    await new Promise((r) => setTimeout(r, 500));
    broker = await startBroker({ dataDir, keepDataDir: true, port });
    const second = await Promise.all(during);
    assert.deepEqual(
      second.map((m) => m.offset),
      Array.from({ length: 100 }, (_, i) => 100 + i),
    );
    consumer.assign([{ topic: 'restart', partition: 0 }]);
    const values: string[] = [];
    const deadline = Date.now() + 15_000;
    while (values.length < 200 && Date.now() < deadline) {
      for (const r of await consumer.poll(300)) values.push(r.value!.toString());
    }
    assert.deepEqual(
      values,
      Array.from({ length: 200 }, (_, i) => String(i)),
    );
  } finally {
    await producer.close(0);
    await consumer.close();
    await broker?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('producers closed while they retry a broker that went away leave no timer running', async () => {
  let broker: BrokerProcess | null = await startBroker();
  // Backoffs of 1 ms: a producer spends most of its retrying in a metadata refresh, and close() lands in one.
  const producers = Array.from(
    { length: 20 },
    () =>
      new Producer({
        bootstrapServers: broker!.bootstrap,
        lingerMs: 0,
        retryBackoffMs: 1,
        retryBackoffMaxMs: 1,
      }),
  );
  try {
    const admin = new Admin({ bootstrapServers: broker.bootstrap });
    assert.equal((await admin.createTopics([{ topic: 'gone', numPartitions: 1 }]))[0]!.error, null);
    await admin.close();
    for (const p of producers) await p.send({ topic: 'gone', value: Buffer.from('before') });
    await broker.stop();
    broker = null;
    const failed = producers.map((p) =>
      p.send({ topic: 'gone', value: Buffer.from('after') }).then(
        () => null,
        (e: unknown) => e,
      ),
    );
    for (const p of producers) {
      await new Promise((r) => setTimeout(r, 1 + Math.random() * 10));
      await p.close(0);
    }
    for (const e of await Promise.all(failed)) assert.ok(e instanceof Error, 'a send pending at close fails');
    await new Promise((r) => setTimeout(r, 200));
    // A retry loop that outlives close() would keep this test's process from ever exiting.
    assert.deepEqual(
      process.getActiveResourcesInfo().filter((r) => r === 'Timeout'),
      [],
      'no timer left after every producer closed',
    );
  } finally {
    for (const p of producers) await p.close(0);
    await broker?.stop();
  }
});
