// The JBOD cluster tests' shared pieces: whether a tmpfs can be mounted (root), the mounted directory and cluster
// a test runs on, and one topic's partition views,
// acks=all writes and reads through the wire, with a wait for every broker to agree on a partition's leader.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from './broker-process.js';
import { waitFor } from './cluster.js';
import { startCluster, type TestCluster } from './test-cluster.js';
import { readPartition, WireClient } from './wire-client.js';

/** Root with fallocate: the tests mount a small tmpfs as the failing log directory. */
export function canMount(): boolean {
  return process.getuid?.() === 0 && spawnSync('fallocate', ['--version']).status === 0;
}

export interface View {
  leaderId: number;
  leaderEpoch: number;
  isrNodes: number[];
  offlineReplicas: number[];
}

/** Metadata views, acks=all writes and reads of the partitions of `TOPIC`. */
export function topicOps(TOPIC: string) {
  async function partitionViewOf(broker: BrokerProcess, partition: number): Promise<View | undefined> {
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      const res = await client.call(ApiKey.METADATA, 9, {
        topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: TOPIC }],
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      });
      return res.topics[0]?.partitions.find(
        (p: { partitionIndex: number }) => p.partitionIndex === partition,
      );
    } finally {
      client.close();
    }
  }

  /** Waits until every broker's metadata names the same leader of `partition`, one that `accept`s the view. */
  function agreed(
    brokers: readonly BrokerProcess[],
    partition: number,
    accept: (v: View) => boolean,
  ): Promise<View> {
    return waitFor(
      `the brokers to agree on the leader of ${TOPIC}-${partition}`,
      async () => {
        const views = await Promise.all(brokers.map((b) => partitionViewOf(b, partition)));
        const first = views[0];
        if (first === undefined || first.leaderId < 0 || !accept(first)) return undefined;
        return views.every((v) => v?.leaderId === first.leaderId && v.leaderEpoch === first.leaderEpoch)
          ? first
          : undefined;
      },
      30_000,
    );
  }

  async function produce(broker: BrokerProcess, partition: number, value: string): Promise<number> {
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      const res = await client.call(
        ApiKey.PRODUCE,
        9,
        {
          transactionalId: null,
          acks: -1,
          timeoutMs: 15_000,
          topicData: [
            { name: TOPIC, partitionData: [{ index: partition, records: buildBatch([{ value }]) }] },
          ],
        },
        20_000,
      );
      return res.responses[0].partitionResponses[0].errorCode;
    } finally {
      client.close();
    }
  }

  async function valuesOf(broker: BrokerProcess, partition: number): Promise<string[]> {
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      return (await readPartition(client, TOPIC, partition)).map((r) => r.value?.toString() ?? '');
    } finally {
      client.close();
    }
  }
  return { partitionViewOf, agreed, produce, valuesOf };
}

/** The directories and cluster of one JBOD test, set by the hooks jbodCluster registers. */
export interface JbodCluster {
  /** The failing directory: a 16 MiB tmpfs. */
  mount: string | undefined;
  healthy: string | undefined;
  cluster: TestCluster | undefined;
}

/**
 * Registers the describe block's hooks: a small tmpfs as the failing log directory and a healthy one for broker
 * `brokerId`, in a three-broker cluster (min.insync.replicas 2, replication factor 3) started one broker after
 * another (each gets the whole start timeout on a loaded machine); all stopped, unmounted and removed after.
 */
export function jbodCluster(brokerId: number, prefix: string): JbodCluster {
  const jbod: JbodCluster = { mount: undefined, healthy: undefined, cluster: undefined };
  let mounted = false;
  before(async () => {
    const mount = mkdtempSync(join(tmpdir(), `${prefix}-failing-`));
    jbod.mount = mount;
    jbod.healthy = mkdtempSync(join(tmpdir(), `${prefix}-healthy-`));
    const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'brook-jbod-tmpfs', mount]);
    assert.equal(m.status, 0, `mount: ${m.stderr}`);
    mounted = true;
    jbod.cluster = await startCluster({
      order: [0, 1, 2],
      overrides: { 'min.insync.replicas': 2, 'default.replication.factor': 3 },
      brokerOverrides: { [brokerId]: { 'log.dirs': `${jbod.healthy},${mount}` } },
    });
  });
  after(async () => {
    await jbod.cluster?.stop();
    if (mounted) spawnSync('umount', [jbod.mount!]);
    for (const dir of [jbod.mount, jbod.healthy])
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return jbod;
}
