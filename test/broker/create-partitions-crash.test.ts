// Partitions a CreateTopics made survive a kill -9 that follows its answer. The broker writes each new
// partition's partition.metadata off the event loop, many at once (src/storage/log-manager.ts), and answers the
// CreateTopics only once they are durable: so right after the answer every partition directory holds its
// topic id, and a broker killed then (no clean shutdown) starts again with every partition, the same topic id
// and each partition writable.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { sleep } from '../helpers/wait.js';

const PARTITIONS = 300;

describe('partitions created by one CreateTopics, then kill -9', { timeout: 300_000 }, () => {
  let broker: BrokerProcess | undefined;
  let dataDir: string | undefined;

  after(async () => {
    await broker?.stop();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });

  it(`holds every partition.metadata at the answer and restarts with all ${PARTITIONS} partitions`, async () => {
    broker = await startBroker({ keepDataDir: true });
    dataDir = broker.dataDir;
    let admin = new Admin({ bootstrapServers: broker.bootstrap, clientId: 'create-crash' });
    let created: { topicId: string };
    try {
      const [result] = await admin.createTopics(
        [{ topic: 'many', numPartitions: PARTITIONS, replicationFactor: 1 }],
        { timeoutMs: 240_000 },
      );
      assert.equal(result?.error ?? null, null);
      created = result!;
    } finally {
      await admin.close();
    }
    // Read at once, before anything else can run in the broker: the answer waited for these files.
    const topicIds = new Set(
      Array.from({ length: PARTITIONS }, (_, p) => {
        const text = readFileSync(join(dataDir!, `many-${p}`, 'partition.metadata'), 'utf8');
        return /^version: 0\ntopic_id: ([A-Za-z0-9_-]{22})\n$/.exec(text)?.[1] ?? `malformed: ${text}`;
      }),
    );
    assert.equal(topicIds.size, 1, `one topic id in every partition: ${[...topicIds].join(', ')}`);

    await broker.kill();
    broker = await startBroker({ dataDir, keepDataDir: true });
    admin = new Admin({ bootstrapServers: broker.bootstrap, clientId: 'create-crash' });
    const producer = new Producer({ bootstrapServers: broker.bootstrap, clientId: 'create-crash' });
    try {
      // Metadata is polled until every partition has its leader again (the restart loads the logs first).
      let description: Awaited<ReturnType<Admin['describeTopics']>>[number] | undefined;
      const ready = (): boolean =>
        description?.error === null &&
        description.partitions.length === PARTITIONS &&
        description.partitions.every((p) => p.leader === broker!.brokerId);
      const deadline = Date.now() + 120_000;
      for (;;) {
        [description] = await admin.describeTopics(['many']);
        if (ready()) break;
        assert.ok(Date.now() < deadline, `after the restart: ${description?.partitions.length} partitions`);
        await sleep(200);
      }
      assert.equal(description!.topicId, created.topicId, 'the same topic, not a new one of the same name');
      for (const partition of [0, PARTITIONS - 1]) {
        const sent = await producer.send({ topic: 'many', partition, value: Buffer.from('after kill -9') });
        assert.equal(sent.partition, partition);
      }
      assert.doesNotMatch(broker.log(), /holds topic id|StorageFormatError/);
    } finally {
      await producer.close();
      await admin.close();
    }
  });
});
