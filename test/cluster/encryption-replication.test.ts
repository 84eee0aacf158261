// Encryption at rest with replication: two brokers, each with a master key of its own. Followers replicate
// plaintext batches and encrypt them with their own keys, so neither broker's disk holds a produced marker, the
// follower's segments are wrapped by its own key-encryption key, and after the leader dies the follower, now
// leader, serves every acknowledged record decrypted with its own keys.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { agreedLeader, produceToLeader, readWhenLeading, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster } from '../helpers/test-cluster.js';

const TOPIC = 'replicated-secret';
const MARKER = 'NARWHAL-MARKER-55c1';

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
}

function readIfPresent(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
    throw err;
  }
}

it('followers encrypt replicated batches with their own keys, and serve them after a failover', async () => {
  const keys = mkdtempSync(join(tmpdir(), 'brook-enc-keys-'));
  const keyFiles = [0, 1].map((id) => {
    const path = join(keys, `broker-${id}.key`);
    writeFileSync(path, `broker${id}:${randomBytes(32).toString('hex')}\n`);
    return path;
  });
  const cluster = await startCluster({
    brokers: 2,
    order: [0, 1],
    overrides: {
      'brook.encryption.enable': 'true',
      'brook.encryption.key.provider': 'file',
      'offsets.topic.replication.factor': 1,
    },
    brokerOverrides: {
      0: { 'brook.encryption.key.file': keyFiles[0]! },
      1: { 'brook.encryption.key.file': keyFiles[1]! },
    },
  });
  try {
    await createTopicOn(cluster.brokers[0]!, TOPIC, {
      assignments: { 0: [0, 1] },
      configs: { 'min.insync.replicas': '2' },
    });
    const values = Array.from({ length: 30 }, (_, i) => `${MARKER}-${i}`);
    const codes = await produceToLeader(cluster.brokers, TOPIC, values);
    assert.deepEqual(
      codes,
      values.map(() => ErrorCode.NONE),
    );
    const dirs = cluster.brokers.map((b) => b.dataDir);
    // Both replicas hold the partition encrypted, each under its own key-encryption key.
    const kekOf = (dir: string) =>
      JSON.parse(readFileSync(join(dir, 'encryption.keys'), 'utf8')) as {
        current: string;
        keks: { masterKeyId: string }[];
      };
    await waitFor('both replicas to hold encrypted segments', async () =>
      dirs.every((d) => readdirSync(join(d, `${TOPIC}-0`)).some((n) => n.endsWith('.enc')))
        ? true
        : undefined,
    );
    for (const [id, dir] of dirs.entries()) {
      const store = kekOf(dir);
      assert.equal(store.keks[0]!.masterKeyId, `broker${id}`);
      const header = readFileSync(join(dir, `${TOPIC}-0`, '00000000000000000000.enc'));
      assert.equal(
        header.toString('ascii', 13, 13 + header[12]!),
        store.current,
        `broker ${id} uses its own KEK`,
      );
      for (const f of filesUnder(dir)) {
        assert.equal(readIfPresent(f).includes(MARKER), false, `broker ${id}: plaintext marker in ${f}`);
      }
    }
    assert.notEqual(kekOf(dirs[0]!).current, kekOf(dirs[1]!).current);
    // The leader dies; the follower, in sync, leads and serves every record with its own keys.
    const view = await agreedLeader(cluster.brokers, TOPIC);
    const leader = cluster.brokers[view.leaderId]!;
    const follower = cluster.brokers[1 - view.leaderId]!;
    await leader.kill();
    await agreedLeader([follower], TOPIC, (v) => v.leaderId === follower.brokerId);
    const records = await readWhenLeading(follower, TOPIC);
    assert.deepEqual(
      records.map((r) => r.value!.toString()),
      values,
    );
  } finally {
    await cluster.stop();
    rmSync(keys, { recursive: true, force: true });
  }
});
