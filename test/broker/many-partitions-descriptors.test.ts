// A broker asked for many partitions at once stays within about one descriptor per partition: each partition
// keeps its active segment open, and the leader-epoch checkpoints that a CreateTopics writes for every new
// partition go through a bounded number of background writes (src/storage/atomic-file.ts) instead of holding a
// temporary file each until the thread pool fsyncs it. The broker's descriptor limit is lowered (prlimit) to
// 900 before it creates 600 partitions: with two descriptors per partition it ran into EMFILE and could not
// write its checkpoints; now every checkpoint lands and the broker still takes writes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';

const PARTITIONS = 600;
const DESCRIPTOR_LIMIT = 900;

describe('many partitions within the descriptor limit', { timeout: 240_000 }, () => {
  let broker: BrokerProcess;
  let admin: Admin;

  before(async () => {
    broker = await startBroker();
    execFileSync('prlimit', [
      '--pid',
      String(broker.pid),
      `--nofile=${DESCRIPTOR_LIMIT}:${DESCRIPTOR_LIMIT}`,
    ]);
    admin = new Admin({ bootstrapServers: broker.bootstrap, clientId: 'many-partitions' });
  });

  after(async () => {
    await admin?.close();
    await broker?.stop();
  });

  it(`creates ${PARTITIONS} partitions under a limit of ${DESCRIPTOR_LIMIT} descriptors and still serves`, async () => {
    const [result] = await admin.createTopics(
      [{ topic: 'many', numPartitions: PARTITIONS, replicationFactor: 1 }],
      {
        timeoutMs: 180_000,
      },
    );
    assert.equal(result?.error ?? null, null);
    // Every partition's leader-epoch checkpoint is written in the background after the create answers.
    const missing = (): number[] =>
      Array.from({ length: PARTITIONS }, (_, p) => p).filter(
        (p) => !existsSync(join(broker.dataDir, `many-${p}`, 'leader-epoch-checkpoint')),
      );
    await waitUntil(
      () => missing().length === 0,
      120_000,
      () =>
        `checkpoints missing for ${missing().length} partitions; broker log:\n${broker.log().slice(-3000)}`,
    );
    assert.doesNotMatch(broker.log(), /EMFILE/, 'the broker never ran out of descriptors');
    const producer = new Producer({ bootstrapServers: broker.bootstrap, clientId: 'many-partitions' });
    try {
      const sent = await producer.send({
        topic: 'many',
        partition: PARTITIONS - 1,
        value: Buffer.from('still here'),
      });
      assert.equal(sent.partition, PARTITIONS - 1);
    } finally {
      await producer.close();
    }
    assert.doesNotMatch(broker.log(), /EMFILE/);
  });
});
