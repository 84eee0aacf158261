// `brook cluster up` starts ZooKeeper and three brokers that form one cluster (kcat sees all three and a
// controller), each in its rack from --racks (Metadata shows them); `brook cluster status` says since when a
// killed broker is gone and when self-healing moves its replicas; `brook cluster down` stops every process it
// started. Given an authorizer, `up` makes User:ANONYMOUS (the brokers on PLAINTEXT) a super user, so that two
// brokers replicate under it.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { run } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { createTopic, produceBatch, WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';

const BIN = resolve(import.meta.dirname, '../../../bin/brook');

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

/** Broker id to rack, as broker `port`'s Metadata answers them. */
async function racksOf(port: number): Promise<Record<number, string | null>> {
  const client = await WireClient.connect('127.0.0.1', port);
  try {
    const md = await client.call(ApiKey.METADATA, 9, {
      topics: [],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    return Object.fromEntries(
      (md.brokers as { nodeId: number; rack: string | null }[]).map((b) => [b.nodeId, b.rack]),
    );
  } finally {
    client.close();
  }
}

/** Values of `keys` that broker `id` (at `port`) reports as set in its static config (source 4). */
async function staticConfigsOf(port: number, id: number, keys: string[]): Promise<Record<string, string>> {
  const client = await WireClient.connect('127.0.0.1', port);
  try {
    const described = await client.call(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [{ resourceType: 4, resourceName: String(id), configurationKeys: keys }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    const configs = described.results[0].configs as { name: string; value: string; configSource: number }[];
    return Object.fromEntries(configs.filter((c) => c.configSource === 4).map((c) => [c.name, c.value]));
  } finally {
    client.close();
  }
}

/** The leader's high watermark of partition 0 of `topic` (ListOffsets latest), asked of broker `port`. */
async function highWatermark(port: number, topic: string): Promise<bigint> {
  const client = await WireClient.connect('127.0.0.1', port);
  try {
    const listed = await client.call(ApiKey.LIST_OFFSETS, 7, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }],
    });
    const p = listed.topics[0].partitions[0];
    assert.equal(p.errorCode, ErrorCode.NONE);
    return p.offset as bigint;
  } finally {
    client.close();
  }
}

describe('brook cluster', () => {
  it('rejects an --override of a key it sets per broker, or one without a value', async () => {
    for (const pair of ['listeners=PLAINTEXT://127.0.0.1:1', 'num.partitions']) {
      const bad = await run(process.execPath, [BIN, 'cluster', 'up', '--override', pair], {
        timeoutMs: 30_000,
      });
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /--override/);
    }
  });

  it('rejects a --racks list with an empty or odd rack name', async () => {
    const bad = await run(process.execPath, [BIN, 'cluster', 'up', '--racks', 'a,,b'], { timeoutMs: 30_000 });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--racks/);
  });

  it('with an authorizer given, makes the brokers super users so that they replicate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-cluster-acl-'));
    const base = await freeRun(2);
    const zkPort = await freePort();
    const args = ['--dir', dir, '--base-port', String(base), '--zookeeper-port', String(zkPort)];
    try {
      const up = await run(
        process.execPath,
        [
          BIN,
          'cluster',
          'up',
          '--brokers',
          '2',
          '--override',
          'authorizer.class.name=kafka.security.authorizer.AclAuthorizer',
          // The last broker down leads acl-rep and has nowhere to move it: retry its controlled shutdown briefly.
          '--override',
          'controlled.shutdown.retry.backoff.ms=200',
          ...args,
        ],
        { timeoutMs: 90_000 },
      );
      assert.equal(up.code, 0, `cluster up failed:\n${up.stdout}\n${up.stderr}`);
      assert.match(up.stdout, /super\.users=User:ANONYMOUS/);
      const client = await WireClient.connect('127.0.0.1', base);
      try {
        await createTopic(client, 'acl-rep', { assignments: { 0: [0, 1] } });
        const produced = await waitFor('a leader for acl-rep on broker 0', async () => {
          const r = await produceBatch(client, 'acl-rep', buildBatch([{ value: 'v' }]), 1);
          return r.errorCode === ErrorCode.NONE ? r : undefined;
        });
        assert.equal(produced.baseOffset, 0n);
      } finally {
        client.close();
      }
      // The high watermark moves only when broker 1 has fetched the record: a follower fetch under the authorizer.
      await waitFor('broker 1 to replicate acl-rep', async () =>
        (await highWatermark(base, 'acl-rep')) === 1n ? true : undefined,
      );
    } finally {
      await run(process.execPath, [BIN, 'cluster', 'down', ...args], { timeoutMs: 60_000 });
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('brings up ZooKeeper and three brokers as one cluster, racks round-robin, and takes them all down', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-cluster-'));
    const base = await freeRun(3);
    const zkPort = await freePort();
    const args = ['--dir', dir, '--base-port', String(base), '--zookeeper-port', String(zkPort)];
    let pids: number[] = [];
    try {
      const up = await run(
        process.execPath,
        [
          BIN,
          'cluster',
          'up',
          '--brokers',
          '3',
          '--racks',
          'a,b',
          '--override',
          'num.partitions=5',
          '--override',
          'log.retention.ms=123456',
          ...args,
        ],
        {
          timeoutMs: 90_000,
        },
      );
      assert.equal(up.code, 0, `cluster up failed:\n${up.stdout}\n${up.stderr}`);
      pids = (JSON.parse(readFileSync(join(dir, 'brokers.json'), 'utf8')) as { pid: number }[]).map(
        (b) => b.pid,
      );
      assert.equal(pids.length, 3);
      let brokers: { id: number }[] = [];
      for (let i = 0; i < 50 && brokers.length < 3; i++) {
        const md = await run('kcat', ['-b', `127.0.0.1:${base}`, '-L', '-J'], { timeoutMs: 10_000 });
        if (md.code === 0) brokers = (JSON.parse(md.stdout) as { brokers: { id: number }[] }).brokers;
        if (brokers.length < 3) await new Promise((r) => setTimeout(r, 200));
      }
      assert.deepEqual(brokers.map((b) => b.id).sort(), [0, 1, 2]);
      // Two racks for three brokers: the third goes back to the first rack.
      assert.deepEqual(await racksOf(base), { 0: 'a', 1: 'b', 2: 'a' });
      assert.match(up.stdout, /broker 1 on 127\.0\.0\.1:\d+ rack b/);
      // --override reaches every broker as a static setting.
      for (let id = 0; id < 3; id++) {
        assert.deepEqual(await staticConfigsOf(base + id, id, ['log.retention.ms', 'num.partitions']), {
          'log.retention.ms': '123456',
          'num.partitions': '5',
        });
      }
      // A broker killed with kill -9: status says since when the controller counts it gone (its own record of
      // the failure time) and when self-healing moves its replicas (the default timeout, 300 s, after that).
      const killedAt = Date.now();
      process.kill(pids[2]!, 'SIGKILL');
      const statusLine =
        /broker 2 pid \d+: stopped; gone since (\S+Z) \(\d+ s\); self-healing moves its replicas at (\S+Z)/;
      let status = '';
      const matched = await waitFor(
        'cluster status naming broker 2 gone',
        async () => {
          status = (await run(process.execPath, [BIN, 'cluster', 'status', ...args], { timeoutMs: 60_000 }))
            .stdout;
          return statusLine.exec(status) ?? undefined;
        },
        90_000,
      ).catch((e: Error) => {
        throw new Error(`${e.message}; last status:\n${status}`);
      });
      const [, since, movesAt] = matched;
      const sinceMs = Date.parse(since!);
      assert.ok(
        sinceMs >= killedAt - 1000 && sinceMs <= Date.now(),
        `gone since ${since}, killed at ${killedAt}`,
      );
      assert.equal(Date.parse(movesAt!) - sinceMs, 300_000);
      assert.match(status, /broker 0 pid \d+: running\n/);
      const down = await run(process.execPath, [BIN, 'cluster', 'down', ...args], { timeoutMs: 90_000 });
      assert.equal(down.code, 0, down.stderr);
      assert.match(down.stdout, /zookeeper stopped/);
      assert.ok(
        pids.every((pid) => !alive(pid)),
        'every broker process ended',
      );
    } finally {
      for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
      await run(process.execPath, [BIN, 'cluster', 'down', ...args], { timeoutMs: 60_000 });
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
