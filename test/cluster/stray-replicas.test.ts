// A broker that comes back after its replicas were moved away while it was gone deletes their old logs, as Kafka
// deletes a stray replica's log once the broker learns from the metadata that it is not a replica any more: the
// controller's StopReplica (delete) could not reach it while it was down. The replicas it still holds stay.

import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { agreedLeader, liveBrokers, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';

describe('stray replicas of a returning broker', () => {
  let cluster: TestCluster | undefined;

  before(async () => {
    // Broker 0 runs the controller; broker 1 is the one that goes and comes back.
    cluster = await startCluster({ order: [0, 1, 2], overrides: { 'zookeeper.session.timeout.ms': 4000 } });
    await createTopicOn(cluster.brokers[0]!, 'moved', { assignments: { 0: [0, 1] } });
    await createTopicOn(cluster.brokers[0]!, 'kept', { assignments: { 0: [1, 2] } });
    for (const topic of ['moved', 'kept'])
      await agreedLeader(cluster.brokers, topic, (v) => v.isrNodes.length === 2, 60_000);
  });
  after(() => cluster?.stop());

  it('deletes the logs of replicas moved away while it was gone, and keeps the others', async () => {
    const c = cluster!;
    const leader = await agreedLeader(c.brokers, 'moved');
    const codes = await produceValues(c.brokers[leader.leaderId]!, 'moved', ['a', 'b', 'c']);
    assert.deepEqual(new Set(codes), new Set([ErrorCode.NONE]));
    const dir = c.brokers[1]!.dataDir;
    await waitFor('the follower log of moved-0 on broker 1', async () =>
      existsSync(join(dir, 'moved-0')) ? true : undefined,
    );
    await c.brokers[1]!.kill();
    await waitFor(
      'broker 1 gone from the cluster',
      async () => ((await liveBrokers(c.brokers[0]!)).includes(1) ? undefined : true),
      30_000,
    );
    const admin = new Admin({ bootstrapServers: c.brokers[0]!.bootstrap });
    try {
      const [r] = await admin.alterPartitionReassignments([
        { topic: 'moved', partition: 0, replicas: [0, 2] },
      ]);
      assert.equal(r!.error, null);
    } finally {
      await admin.close();
    }
    await waitFor(
      'the move to brokers 0 and 2 finished',
      async () => {
        const v = await partitionView(c.brokers[0]!, 'moved');
        return v !== undefined && v.replicaNodes.join(',') === '0,2' && v.isrNodes.length === 2
          ? v
          : undefined;
      },
      60_000,
    );
    assert.ok(existsSync(join(dir, 'moved-0')), 'the old log is still on the stopped broker');

    const back = await c.start(1);
    await waitFor(
      'the stray log of moved-0 deleted on broker 1',
      async () => (existsSync(join(dir, 'moved-0')) ? undefined : true),
      60_000,
    );
    assert.match(
      back.log(),
      /deleted the log of stray replica moved-0: its replicas are now 0,2, not this broker/,
    );
    // Renamed for deletion at once (removed after file.delete.delay.ms), as a deleted topic's log.
    assert.ok(
      readdirSync(dir).every((name) => !name.startsWith('moved-0') || name.endsWith('-delete')),
      readdirSync(dir).join(' '),
    );
    await waitFor(
      'broker 1 back in the ISR of kept-0',
      async () => {
        const v = await partitionView(c.brokers[0]!, 'kept');
        return v?.isrNodes.includes(1) ? v : undefined;
      },
      60_000,
    );
    assert.ok(existsSync(join(dir, 'kept-0')), 'the replica broker 1 still holds keeps its log');
  });
});
