// AlterReplicaLogDirs through the wire, with Brook's admin client, on a broker with two log directories: a replica
// moves to the other directory through a `-future` log while it keeps taking writes (DescribeLogDirs shows the
// future log meanwhile), then replaces the current log with every acknowledged record; errors as Kafka answers
// them; and a broker killed with SIGKILL in the middle of a move restarts with a consistent log and finishes it.
// replica.alter.log.dirs.io.max.bytes.per.second slows the copy down so that the move can be observed. Last,
// `brook reassign-partitions` with Kafka's "log_dirs" starts such a move and --verify reports it.

import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { Admin } from '../../src/client/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { produceValues, waitFor } from '../helpers/cluster.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';

const BIG = 'x'.repeat(50_000);
const BROOK = resolve(import.meta.dirname, '../../../bin/brook');

function brokerOverrides(dirs: readonly string[]): Record<string, string | number> {
  return {
    'log.dirs': dirs.join(','),
    // About 300 KB/s, measured over two one-second samples: a 1.5 MB log takes a few seconds to move.
    'replica.alter.log.dirs.io.max.bytes.per.second': 300_000,
    'replication.quota.window.num': 2,
    'replication.quota.window.size.seconds': 1,
  };
}

async function produce(broker: BrokerProcess, topic: string, values: readonly string[]): Promise<void> {
  const codes = await produceValues(broker, topic, values);
  assert.deepEqual(
    codes,
    values.map(() => ErrorCode.NONE),
    `produce ${topic}`,
  );
}

async function valuesOf(broker: BrokerProcess, topic: string): Promise<string[]> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    return (await readPartition(client, topic, 0)).map((r) => r.value?.toString() ?? '');
  } finally {
    client.close();
  }
}

interface Placement {
  current: string | undefined;
  future: string | undefined;
  futureSize: number;
}

async function placementOf(admin: Admin, topic: string): Promise<Placement> {
  const dirs = await admin.describeLogDirs([0]);
  const out: Placement = { current: undefined, future: undefined, futureSize: 0 };
  for (const d of dirs) {
    for (const p of d.partitions) {
      if (p.topic !== topic || p.partition !== 0) continue;
      if (p.isFuture) {
        out.future = d.logDir;
        out.futureSize = p.size;
      } else out.current = d.logDir;
    }
  }
  return out;
}

function entriesOf(dir: string, topic: string): string[] {
  return readdirSync(dir).filter((n) => n.startsWith(`${topic}-0`) && !n.endsWith('-delete'));
}

describe('AlterReplicaLogDirs', () => {
  const dirs = [mkdtempSync(join(tmpdir(), 'brook-move-a-')), mkdtempSync(join(tmpdir(), 'brook-move-b-'))];
  const started: BrokerProcess[] = [];
  after(async () => {
    for (const b of started) await b.kill();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function start(): Promise<BrokerProcess> {
    const broker = await startBroker({ dataDir: dirs[0]!, overrides: brokerOverrides(dirs) });
    started.push(broker);
    return broker;
  }

  it('moves a replica that keeps taking writes, and answers errors as Kafka', async () => {
    const broker = await start();
    const admin = new Admin({ bootstrapServers: broker.bootstrap });
    try {
      const [created] = await admin.createTopics([
        { topic: 'moving', numPartitions: 1, replicationFactor: 1 },
      ]);
      assert.equal(created!.error, null);
      const first = Array.from({ length: 30 }, (_, i) => `${i}:${BIG}`);
      await waitFor('the partition to take writes', async () => {
        try {
          await produce(broker, 'moving', ['0:first']);
          return true;
        } catch {
          return undefined;
        }
      });
      await produce(broker, 'moving', first);
      const source = (await placementOf(admin, 'moving')).current!;
      const target = dirs.find((d) => d !== source)!;

      const errors = await admin.alterReplicaLogDirs([
        { topic: 'moving', partition: 0, broker: 0, logDir: join(tmpdir(), 'brook-no-such-log-dir') },
        { topic: 'moving', partition: 5, broker: 0, logDir: target },
      ]);
      assert.equal(errors[0]!.error?.code, ErrorCode.LOG_DIR_NOT_FOUND);
      assert.equal(errors[1]!.error?.code, ErrorCode.REPLICA_NOT_AVAILABLE);

      const [moved] = await admin.alterReplicaLogDirs([
        { topic: 'moving', partition: 0, broker: 0, logDir: target },
      ]);
      assert.equal(moved!.error, null);
      // While it moves: the future log in the target, the current one still in the source, writes still taken.
      const during = await waitFor('the future log to show', async () => {
        const p = await placementOf(admin, 'moving');
        return p.future === target ? p : undefined;
      });
      assert.equal(during.current, source);
      assert.ok(entriesOf(target, 'moving').some((n) => /^moving-0\.[0-9a-f]{32}-future$/.test(n)));
      const second = Array.from({ length: 20 }, (_, i) => `during-${i}`);
      await produce(broker, 'moving', second);

      await waitFor(
        'the move to finish',
        async () => {
          const p = await placementOf(admin, 'moving');
          return p.current === target && p.future === undefined ? true : undefined;
        },
        60_000,
      );
      assert.deepEqual(entriesOf(target, 'moving'), ['moving-0']);
      assert.deepEqual(entriesOf(source, 'moving'), []);
      const third = ['after-0', 'after-1'];
      await produce(broker, 'moving', third);
      assert.deepEqual(await valuesOf(broker, 'moving'), ['0:first', ...first, ...second, ...third]);
      // Moving it where it is already is a no-op.
      const [again] = await admin.alterReplicaLogDirs([
        { topic: 'moving', partition: 0, broker: 0, logDir: target },
      ]);
      assert.equal(again!.error, null);
      assert.equal((await placementOf(admin, 'moving')).future, undefined);
    } catch (err) {
      console.error(broker.log().slice(-6000));
      throw err;
    } finally {
      await admin.close();
      await broker.kill();
    }
  });

  it('a broker killed with SIGKILL during a move restarts with a consistent log and finishes the move', async () => {
    let broker = await start();
    let admin = new Admin({ bootstrapServers: broker.bootstrap });
    const values = Array.from({ length: 40 }, (_, i) => `${i}:${BIG}`);
    let target = '';
    try {
      const [created] = await admin.createTopics([
        { topic: 'crash', numPartitions: 1, replicationFactor: 1 },
      ]);
      assert.equal(created!.error, null);
      await waitFor('the partition to take writes', async () => {
        try {
          await produce(broker, 'crash', [values[0]!]);
          return true;
        } catch {
          return undefined;
        }
      });
      await produce(broker, 'crash', values.slice(1));
      const source = (await placementOf(admin, 'crash')).current!;
      target = dirs.find((d) => d !== source)!;
      const [moved] = await admin.alterReplicaLogDirs([
        { topic: 'crash', partition: 0, broker: 0, logDir: target },
      ]);
      assert.equal(moved!.error, null);
      await waitFor('the future log to hold part of the log', async () => {
        const p = await placementOf(admin, 'crash');
        return p.future === target && p.futureSize > 0 ? true : undefined;
      });
    } finally {
      await admin.close();
    }
    await broker.kill();
    assert.ok(
      entriesOf(target, 'crash').some((n) => n.endsWith('-future')),
      'the move was still in progress',
    );

    broker = await start();
    admin = new Admin({ bootstrapServers: broker.bootstrap });
    try {
      await waitFor(
        'the move to finish after the restart',
        async () => {
          const p = await placementOf(admin, 'crash');
          return p.current === target && p.future === undefined ? true : undefined;
        },
        60_000,
      );
      assert.deepEqual(await valuesOf(broker, 'crash'), values);
      await produce(broker, 'crash', ['after']);
      assert.deepEqual(await valuesOf(broker, 'crash'), [...values, 'after']);
    } catch (err) {
      console.error(broker.log().slice(-6000));
      throw err;
    } finally {
      await admin.close();
      await broker.kill();
    }
  });

  it('brook reassign-partitions moves a replica to the log directory its log_dirs name, and --verify reports it', async () => {
    const broker = await start();
    const admin = new Admin({ bootstrapServers: broker.bootstrap });
    const scratch = mkdtempSync(join(tmpdir(), 'brook-move-cli-'));
    const brook = (...args: string[]) =>
      run(process.execPath, [BROOK, 'reassign-partitions', '--bootstrap-server', broker.bootstrap, ...args], {
        timeoutMs: 60_000,
      });
    try {
      const [created] = await admin.createTopics([{ topic: 'cli', numPartitions: 1, replicationFactor: 1 }]);
      assert.equal(created!.error, null);
      const values = Array.from({ length: 30 }, (_, i) => `${i}:${BIG}`);
      await waitFor('the partition to take writes', async () => {
        try {
          await produce(broker, 'cli', [values[0]!]);
          return true;
        } catch {
          return undefined;
        }
      });
      await produce(broker, 'cli', values.slice(1));
      const source = (await placementOf(admin, 'cli')).current!;
      const target = dirs.find((d) => d !== source)!;
      const file = join(scratch, 'move.json');
      writeFileSync(
        file,
        JSON.stringify({
          version: 1,
          partitions: [{ topic: 'cli', partition: 0, replicas: [0], log_dirs: [target] }],
        }),
      );
      const executed = await brook(
        '--execute',
        '--reassignment-json-file',
        file,
        '--replica-alter-log-dirs-throttle',
        '300000',
      );
      assert.equal(executed.code, 0, executed.stderr);
      assert.match(executed.stdout, /The replica-alter-dir throttle limit was set to 300000 B\/s/);
      assert.match(executed.stdout, /Successfully started log directory move for: cli-0-0/);
      const first = await brook('--verify', '--reassignment-json-file', file);
      assert.equal(first.code, 0, first.stderr);
      assert.match(
        first.stdout,
        /Reassignment of replica cli-0-0 (is still in progress|completed successfully)\./,
      );
      await waitFor(
        'verify to report the move completed',
        async () => {
          const r = await brook('--verify', '--reassignment-json-file', file);
          return r.stdout.includes('Reassignment of replica cli-0-0 completed successfully.') ? r : undefined;
        },
        60_000,
      );
      assert.equal((await placementOf(admin, 'cli')).current, target);
      assert.deepEqual(await valuesOf(broker, 'cli'), values);
    } catch (err) {
      console.error(broker.log().slice(-6000));
      throw err;
    } finally {
      await admin.close();
      await broker.kill();
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
