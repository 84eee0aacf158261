// A reassignment that changes brokers and log directories together, as Kafka's reassign-partitions does with
// "log_dirs": three broker processes over ZooKeeper, each with two log directories; a partition on brokers 0 and 1
// moves to brokers 1 and 2, its replica on broker 1 to broker 1's other directory and its new replica on broker 2
// into a named directory of broker 2 (which does not host it yet: AlterReplicaLogDirs is answered
// REPLICA_NOT_AVAILABLE and retried until the replica arrives, or creates it there). --verify reports the
// partition and both replicas completed; DescribeLogDirs shows each replica where asked and nothing left on
// broker 0; every acknowledged record is read back from the new leader.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { run } from '../helpers/broker-process.js';
import { agreedLeader, produceValues, waitFor } from '../helpers/cluster.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';

const BROOK = resolve(import.meta.dirname, '../../../bin/brook');
const TOPIC = 'moved';

describe('reassignment with log_dirs across brokers and directories', () => {
  const dirs = [0, 1, 2].map((id) => [
    mkdtempSync(join(tmpdir(), `brook-reassign-${id}a-`)),
    mkdtempSync(join(tmpdir(), `brook-reassign-${id}b-`)),
  ]);
  const scratch = mkdtempSync(join(tmpdir(), 'brook-reassign-json-'));
  let cluster: TestCluster | undefined;
  let admin: Admin | undefined;

  before(async () => {
    cluster = await startCluster({
      overrides: { 'auto.leader.rebalance.enable': false },
      brokerOverrides: Object.fromEntries(dirs.map((d, id) => [id, { 'log.dirs': d.join(',') }])),
    });
  });
  after(async () => {
    await admin?.close();
    await cluster?.stop();
    for (const d of [...dirs.flat(), scratch]) rmSync(d, { recursive: true, force: true });
  });

  /** Broker → the directory holding the partition's current log there (futures left out). */
  async function placement(): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (const d of await admin!.describeLogDirs([0, 1, 2])) {
      for (const p of d.partitions)
        if (p.topic === TOPIC && p.partition === 0 && !p.isFuture) out.set(d.broker, d.logDir);
    }
    return out;
  }

  it('moves replicas to new brokers and named directories at once', async () => {
    const c = cluster!;
    admin = new Admin({ bootstrapServers: c.bootstrap, clientId: 'reassign-log-dirs-test' });
    const [created] = await admin.createTopics([{ topic: TOPIC, replicaAssignment: { 0: [0, 1] } }]);
    assert.equal(created!.error, null);
    const first = await agreedLeader(c.brokers, TOPIC, (v) => v.isrNodes.length === 2);
    const values = Array.from({ length: 40 }, (_, i) => `v${i}`);
    assert.deepEqual(
      await produceValues(c.brokers[first.leaderId]!, TOPIC, values),
      values.map(() => ErrorCode.NONE),
    );
    const before = await placement();
    assert.deepEqual([...before.keys()].sort(), [0, 1]);
    const target1 = dirs[1]!.find((d) => d !== before.get(1))!;
    const target2 = dirs[2]![1]!;
    const file = join(scratch, 'move.json');
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        partitions: [{ topic: TOPIC, partition: 0, replicas: [1, 2], log_dirs: [target1, target2] }],
      }),
    );
    const brook = (...args: string[]) =>
      run(process.execPath, [BROOK, 'reassign-partitions', '--bootstrap-server', c.bootstrap, ...args], {
        timeoutMs: 60_000,
      });
    const executed = await brook('--execute', '--reassignment-json-file', file);
    assert.equal(executed.code, 0, executed.stderr);
    assert.match(executed.stdout, /Successfully started partition reassignment for moved-0/);

    const verified = await waitFor(
      '--verify to report the partition and both replicas completed',
      async () => {
        const r = await brook('--verify', '--reassignment-json-file', file);
        return r.stdout.includes('Reassignment of partition moved-0 is completed.') &&
          r.stdout.includes('Reassignment of replica moved-0-1 completed successfully.') &&
          r.stdout.includes('Reassignment of replica moved-0-2 completed successfully.')
          ? r
          : undefined;
      },
      60_000,
    );
    assert.equal(verified.code, 0, verified.stderr);
    const after = await placement();
    assert.deepEqual(
      Object.fromEntries(after),
      { 1: target1, 2: target2 },
      'each replica in the directory asked for, none left on broker 0',
    );
    const [described] = await admin.describeTopics([TOPIC]);
    assert.deepEqual(described!.partitions[0]!.replicas, [1, 2]);

    const leader = await agreedLeader(
      c.brokers,
      TOPIC,
      (v) => v.isrNodes.length === 2 && [1, 2].includes(v.leaderId),
    );
    assert.deepEqual(await produceValues(c.brokers[leader.leaderId]!, TOPIC, ['after']), [ErrorCode.NONE]);
    const client = await WireClient.connect(
      c.brokers[leader.leaderId]!.host,
      c.brokers[leader.leaderId]!.port,
    );
    try {
      const read = (await readPartition(client, TOPIC, 0)).map((r) => r.value?.toString() ?? '');
      assert.deepEqual(read, [...values, 'after']);
    } finally {
      client.close();
    }
  });
});
