// Partition reassignment in a real cluster: a ZooKeeper server and three broker processes. A topic written with
// acks=all on one broker moves to the two others through the admin client (AlterPartitionReassignments): the new
// replicas are created and catch up, the controller switches the partition over and the old broker deletes its
// copy; every record is read back from the new leader. The CLI tools (reassign-partitions, leader-election) run
// against the same cluster. Last, a broker that had already left a partition's ISR dies, and the other brokers'
// metadata lists it among the partition's offline replicas. A topic deleted while its reassignment is in progress
// leaves nothing behind on any broker.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { Admin } from '../../src/client/admin.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, run } from '../helpers/broker-process.js';
import { agreedController, liveBrokers, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { fetchBody, readPartition, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'moving';
const RECORDS = 200;
const BROOK = resolve(import.meta.dirname, '../../../bin/brook');
/** The broker that tests pause to hold a reassignment in progress (others[1]); it has a long session. */
const PAUSED = 2;

/** Runs `brook <args>` to completion. */
function brook(...args: string[]) {
  return run(process.execPath, [BROOK, ...args], { timeoutMs: 30_000 });
}

function values(from: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `m${from + i}`);
}

async function readValues(broker: BrokerProcess, topic: string): Promise<string[]> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    return (await readPartition(client, topic, 0)).map((r) => r.value!.toString());
  } finally {
    client.close();
  }
}

/** The lines of a broker's log about `topic`'s partition 0, or about leadership, ISR and truncation. */
function relevantLines(log: string, topic: string): string {
  return log
    .split('\n')
    .filter((l) => l.includes(`${topic}-0`) || /truncat|leader|ISR|isr|epoch/i.test(l))
    .slice(-200)
    .join('\n');
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

describe('partition reassignment in a three-broker cluster', () => {
  let cluster: TestCluster | undefined;
  let brokers: BrokerProcess[] = [];
  let admin: Admin;
  let controllerId = -1;
  /** The two brokers that are not the controller: 1, and PAUSED. */
  let others: number[] = [];
  const files = mkdtempSync(join(tmpdir(), 'brook-reassign-'));

  function reassignmentFile(
    fileName: string,
    partitions: { topic: string; partition: number; replicas: number[] }[],
  ) {
    const path = join(files, fileName);
    writeFileSync(path, JSON.stringify({ version: 1, partitions }));
    return path;
  }

  interface WriterLog {
    acked: { value: string; leader: number }[];
    /** Error codes of failed attempts (-1: no leader known, or the connection failed). */
    errors: number[];
  }

  /**
   * Writes w0, w1, ... as acks=all records, one at a time, to whichever broker `observer` says leads `topic`, while
   * `running()`, noting each acknowledged value with the broker that acknowledged it. A failed value is not sent
   * again (it may or may not be in the log, as for any producer without idempotence).
   */
  async function writeWhile(
    running: () => boolean,
    topic: string,
    observer: BrokerProcess,
    log: WriterLog,
  ): Promise<void> {
    for (let i = 0; running(); i++) {
      const view = await partitionView(observer, topic).catch(() => undefined);
      const leaderId = view?.leaderId ?? -1;
      const leader = leaderId < 0 ? undefined : brokers[leaderId];
      const [code] =
        leader === undefined ? [-1] : await produceValues(leader, topic, [`w${i}`]).catch(() => [-1]);
      if (code === ErrorCode.NONE) {
        log.acked.push({ value: `w${i}`, leader: leaderId });
      } else {
        log.errors.push(code ?? -1);
        await sleep(50);
      }
    }
  }

  async function createTopic(topic: string, replicas: number[]): Promise<void> {
    const created = await admin.createTopics([{ topic, replicaAssignment: { 0: replicas } }]);
    assert.equal(created[0]!.error, null);
    await waitFor(`a leader for ${topic} with a full ISR`, async () => {
      const v = await partitionView(brokers[replicas[0]!]!, topic);
      return v !== undefined && v.leaderId === replicas[0] && v.isrNodes.length === replicas.length
        ? v
        : undefined;
    });
  }

  before(async () => {
    cluster = await startCluster({
      // Broker 0 starts first and runs the controller, so that the broker the tests pause is known beforehand.
      order: [0, 1, 2],
      overrides: {
        // A broker killed by the last test is seen gone once its session expires.
        'zookeeper.session.timeout.ms': 10_000,
        'replica.lag.time.max.ms': 1000,
      },
      brokerOverrides: {
        // Broker 2 is the one paused (SIGSTOP) to hold reassignments in progress, for an admin call and up to
        // three CLI runs, and its session must outlive the pause: a broker whose session expires is gone for the
        // controller, which then drops requests made for it (a StopReplica that deletes a removed replica among
        // them) and, when the broker registers again, sends it only the partitions it still hosts, so it keeps
        // the removed replica (as a Kafka broker with ZooKeeper does). On a loaded machine the pause outlasted a
        // 10 s session; this is the longest session the test ZooKeeper grants.
        [PAUSED]: { 'zookeeper.session.timeout.ms': 60_000 },
      },
    });
    brokers = cluster.brokers;
    admin = new Admin({ bootstrapServers: brokers.map((b) => b.bootstrap), clientId: 'reassign-test' });
    // Every broker knows the controller and the three live brokers before the tests begin.
    controllerId = await agreedController(brokers);
    assert.equal(controllerId, 0, 'the broker started first runs the controller');
    others = [1, PAUSED];
  });
  after(async () => {
    await admin?.close();
    await cluster?.stop();
    rmSync(files, { recursive: true, force: true });
  });

  it('moves a partition to two other brokers, keeping every acknowledged record', async () => {
    // The source is not the controller, so StopReplica reaches it over the wire; of the targets, the one that is
    // not the controller is paused while the move starts, so the reassignment is seen in progress.
    const source = others[0]!;
    const targets = [controllerId, others[1]!];
    const paused = targets[1]!;
    await createTopic(TOPIC, [source]);
    assert.deepEqual(
      await produceValues(brokers[source]!, TOPIC, values(0, RECORDS)),
      values(0, RECORDS).map(() => ErrorCode.NONE),
    );
    assert.ok(existsSync(join(brokers[source]!.dataDir, `${TOPIC}-0`)), 'the source holds the partition');

    // A writer produces all along: while the move is held, while the new replicas catch up and while leadership
    // moves.
    let writing = true;
    const writes: WriterLog = { acked: [], errors: [] };
    const writer = writeWhile(() => writing, TOPIC, brokers[controllerId]!, writes);
    let moved: Awaited<ReturnType<typeof partitionView>>;
    try {
      process.kill(brokers[paused]!.pid, 'SIGSTOP');
      try {
        const started = await admin.alterPartitionReassignments([
          { topic: TOPIC, partition: 0, replicas: targets },
        ]);
        assert.deepEqual(started, [{ topic: TOPIC, partition: 0, error: null }]);
        const ongoing = await admin.listPartitionReassignments();
        assert.deepEqual(ongoing, [
          {
            topic: TOPIC,
            partition: 0,
            replicas: [...targets, source],
            addingReplicas: targets,
            removingReplicas: [source],
          },
        ]);
        const moving = await waitFor('the full replica set in metadata', async () => {
          const v = await partitionView(brokers[source]!, TOPIC);
          return v?.replicaNodes.length === 3 ? v : undefined;
        });
        assert.deepEqual(moving.replicaNodes, [...targets, source]);
        assert.equal(moving.leaderId, source, 'the source leads until the targets are in sync');
        const listed = await brook(
          'reassign-partitions',
          '--bootstrap-server',
          brokers[source]!.bootstrap,
          '--list',
        );
        assert.equal(listed.code, 0, listed.stderr);
        assert.equal(
          listed.stdout,
          `Current partition reassignments:\n${TOPIC}-0: replicas: ${[...targets, source].join(',')}. adding: ${targets.join(',')}. removing: ${source}.\n`,
        );
      } finally {
        process.kill(brokers[paused]!.pid, 'SIGCONT');
      }
      await waitFor(
        'the reassignment to finish',
        async () => ((await admin.listPartitionReassignments()).length === 0 ? true : undefined),
        30_000,
      );
      moved = await waitFor('metadata of the moved partition', async () => {
        const v = await partitionView(brokers[paused]!, TOPIC);
        return v?.replicaNodes.length === 2 ? v : undefined;
      });
      await waitFor('a write acknowledged by the new leader', async () =>
        writes.acked.some((a) => a.leader === targets[0]) ? true : undefined,
      );
    } finally {
      writing = false;
      await writer;
    }
    assert.deepEqual(moved!.replicaNodes, targets);
    assert.deepEqual([...moved!.isrNodes].sort(), [...targets].sort());
    assert.equal(moved!.leaderId, targets[0], 'the first target replica leads');
    const leader = brokers[moved!.leaderId]!;
    const read = await readValues(leader, TOPIC);
    assert.deepEqual(read.slice(0, RECORDS), values(0, RECORDS), 'every record, in order');
    const written = read.slice(RECORDS);
    assert.deepEqual(
      [...new Set(writes.acked.map((a) => a.leader))].sort(),
      [source, targets[0]!].sort(),
      'the writer was acknowledged by the old leader and by the new one',
    );
    assert.ok(
      !writes.errors.includes(ErrorCode.REQUEST_TIMED_OUT),
      `a write waiting on the old leader ends when it loses the partition, not at its timeout: ${writes.errors.join(',')}`,
    );
    const ackedValues = writes.acked.map((a) => a.value);
    const kept = written.filter((v) => ackedValues.includes(v));
    if (!isDeepStrictEqual(kept, ackedValues)) {
      const missing = writes.acked.filter((a) => !written.includes(a.value));
      const logs = brokers
        .map((b, id) => `--- broker ${id} log ---\n${relevantLines(b.log(), TOPIC)}`)
        .join('\n');
      assert.fail(
        `every record acknowledged during the move is on the new leader, in order: missing ${JSON.stringify(missing)}` +
          ` (source ${source}, targets ${targets}); the new leader ${moved!.leaderId} holds ${read.length} records,` +
          ` written during the move: ${written.join(',')}; acknowledged: ${writes.acked
            .map((a) => `${a.value}@${a.leader}`)
            .join(',')}; errors: ${writes.errors.join(',')}\n${logs}`,
      );
    }
    await waitFor('the source to delete its copy', async () =>
      existsSync(join(brokers[source]!.dataDir, `${TOPIC}-0`)) ? undefined : true,
    );
    assert.deepEqual(
      await produceValues(leader, TOPIC, values(RECORDS, 10)),
      values(RECORDS, 10).map(() => ErrorCode.NONE),
      'writes continue on the new leader',
    );
    assert.deepEqual((await readValues(leader, TOPIC)).slice(-10), values(RECORDS, 10));
    for (const id of targets) {
      assert.ok(existsSync(join(brokers[id]!.dataDir, `${TOPIC}-0`)), `broker ${id} holds the partition`);
    }
  });
  it('ends an acks=all produce waiting on a leader that a reassignment removes with NOT_LEADER_OR_FOLLOWER', async () => {
    const topic = 'deposed';
    const [leader, follower] = others as [number, number];
    await createTopic(topic, [leader, follower, controllerId]);
    // The paused follower is still in the ISR, so the write waits for it; meanwhile the partition moves to
    // [controller, follower] (both in the ISR, so the move finishes at once) and the old leader is stopped.
    process.kill(brokers[follower]!.pid, 'SIGSTOP');
    let outcome: number[];
    const began = Date.now();
    try {
      const waiting = produceValues(brokers[leader]!, topic, ['parked']);
      await sleep(200);
      const moved = await admin.alterPartitionReassignments([
        { topic, partition: 0, replicas: [controllerId, follower] },
      ]);
      assert.deepEqual(moved, [{ topic, partition: 0, error: null }]);
      outcome = await waiting;
    } finally {
      process.kill(brokers[follower]!.pid, 'SIGCONT');
    }
    assert.deepEqual(outcome, [ErrorCode.NOT_LEADER_OR_FOLLOWER]);
    assert.ok(Date.now() - began < 10_000, 'at once, not at the 15 s request timeout');
  });

  it('ends a consumer fetch waiting on a leader that a reassignment removes with NOT_LEADER_OR_FOLLOWER', async () => {
    const topic = 'deposed-fetch';
    const [leader, follower] = others as [number, number];
    await createTopic(topic, [leader, follower, controllerId]);
    const consumer = await WireClient.connect(brokers[leader]!.host, brokers[leader]!.port);
    try {
      // At the end of an empty partition with a max wait far beyond the test's: only a change of leadership
      // can end this fetch early.
      consumer.send(ApiKey.FETCH, 12, fetchBody(topic, 0, 0, 30_000, 1));
      const answer = consumer.receive(40_000);
      await sleep(300);
      const began = Date.now();
      const moved = await admin.alterPartitionReassignments([
        { topic, partition: 0, replicas: [controllerId, follower] },
      ]);
      assert.deepEqual(moved, [{ topic, partition: 0, error: null }]);
      const response = await answer;
      assert.equal(response.responses[0].partitions[0].errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
      assert.ok(Date.now() - began < 10_000, 'at once, not at the 30 s max wait');
    } finally {
      consumer.close();
    }
  });

  it('answers NOT_CONTROLLER from a broker that is not the controller', async () => {
    const client = await WireClient.connect(brokers[others[0]!]!.host, brokers[others[0]!]!.port);
    try {
      const altered = await client.call(ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0, {
        timeoutMs: 5000,
        topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, replicas: [others[0]!] }] }],
      });
      assert.equal(altered.errorCode, ErrorCode.NOT_CONTROLLER);
      const listed = await client.call(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, {
        timeoutMs: 5000,
        topics: null,
      });
      assert.equal(listed.errorCode, ErrorCode.NOT_CONTROLLER);
    } finally {
      client.close();
    }
  });

  it('cancels a reassignment in progress with the CLI: the original replicas stay and the added one is deleted', async () => {
    const topic = 'cancelled';
    const [source, added] = others as [number, number];
    await createTopic(topic, [source]);
    assert.deepEqual(await produceValues(brokers[source]!, topic, ['c0', 'c1']), [0, 0]);
    const file = reassignmentFile('cancel.json', [{ topic, partition: 0, replicas: [added] }]);
    const bootstrap = brokers[controllerId]!.bootstrap;
    process.kill(brokers[added]!.pid, 'SIGSTOP');
    const pausedAt = Date.now();
    let pausedMs = 0;
    try {
      // Started through the admin client, which is quicker than a CLI process: the broker is paused meanwhile.
      const started = await admin.alterPartitionReassignments([{ topic, partition: 0, replicas: [added] }]);
      assert.deepEqual(started, [{ topic, partition: 0, error: null }]);
      const verified = await brook(
        'reassign-partitions',
        '--bootstrap-server',
        bootstrap,
        '--verify',
        '--reassignment-json-file',
        file,
      );
      assert.equal(
        verified.stdout,
        `Status of partition reassignment:\nReassignment of partition ${topic}-0 is still in progress.\n`,
      );
      const other = reassignmentFile('other.json', [
        { topic: TOPIC, partition: 0, replicas: [controllerId] },
      ]);
      const refused = await brook(
        'reassign-partitions',
        '--bootstrap-server',
        bootstrap,
        '--execute',
        '--reassignment-json-file',
        other,
      );
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /^Cannot execute because there is an existing partition assignment\./);
      const cancelled = await brook(
        'reassign-partitions',
        '--bootstrap-server',
        bootstrap,
        '--cancel',
        '--reassignment-json-file',
        file,
      );
      assert.equal(cancelled.code, 0, cancelled.stderr);
      assert.equal(cancelled.stdout, `Successfully cancelled partition reassignment for: ${topic}-0\n`);
    } finally {
      process.kill(brokers[added]!.pid, 'SIGCONT');
      pausedMs = Date.now() - pausedAt;
    }
    assert.deepEqual(await admin.listPartitionReassignments(), []);
    const view = await waitFor('the original replica set', async () => {
      const v = await partitionView(brokers[added]!, topic);
      return v?.replicaNodes.length === 1 ? v : undefined;
    });
    assert.deepEqual(view.replicaNodes, [source]);
    assert.equal(view.leaderId, source);
    const verified = await brook(
      'reassign-partitions',
      '--bootstrap-server',
      bootstrap,
      '--verify',
      '--reassignment-json-file',
      file,
    );
    assert.ok(
      verified.stdout.startsWith(
        `Status of partition reassignment:\nThere is no active reassignment of partition ${topic}-0, but replica set is ${source} rather than ${added}.\nClearing broker-level throttles on brokers `,
      ),
      verified.stdout,
    );
    // Seen once at a load average of 20, when the pause outlived the broker's session (then 10 s; see before()).
    await waitFor('the cancelled replica to be deleted', async () =>
      existsSync(join(brokers[added]!.dataDir, `${topic}-0`)) ? undefined : true,
    ).catch((e: Error) => {
      const logs = [controllerId, added].map(
        (id) => `--- broker ${id} log ---\n${relevantLines(brokers[id]!.log(), topic)}`,
      );
      throw new Error(`${e.message} (broker ${added} was paused for ${pausedMs} ms)\n${logs.join('\n')}`);
    });
    assert.deepEqual(await readValues(brokers[source]!, topic), ['c0', 'c1']);
  });

  it('deletes a topic whose reassignment is in progress: no replica, reassignment or metadata of it is left', async () => {
    const topic = 'deleted-moving';
    const [source, added] = others as [number, number];
    await createTopic(topic, [source]);
    assert.deepEqual(await produceValues(brokers[source]!, topic, ['d0', 'd1']), [0, 0]);
    // An admin of the controller alone, its metadata read before the pause: no request of it can go to the
    // paused broker and wait out a request timeout.
    const controllerAdmin = new Admin({
      bootstrapServers: [brokers[controllerId]!.bootstrap],
      clientId: 'reassign-delete',
    });
    await controllerAdmin.listPartitionReassignments();
    process.kill(brokers[added]!.pid, 'SIGSTOP');
    try {
      const started = await controllerAdmin.alterPartitionReassignments([
        { topic, partition: 0, replicas: [added] },
      ]);
      assert.deepEqual(started, [{ topic, partition: 0, error: null }]);
      const askedAt = Date.now();
      const deleted = await controllerAdmin.deleteTopics([topic], { timeoutMs: 2_000 });
      // Done once the brokers' metadata drops the topic, or REQUEST_TIMED_OUT after the request's 2 s (the
      // deletion goes on); not held until the paused broker answers or its 60 s session ends, as it once was.
      assert.ok(
        deleted[0]!.error === null || deleted[0]!.error.code === ErrorCode.REQUEST_TIMED_OUT,
        JSON.stringify(deleted),
      );
      assert.ok(Date.now() - askedAt < 20_000, `DeleteTopics answered after ${Date.now() - askedAt} ms`);
    } finally {
      process.kill(brokers[added]!.pid, 'SIGCONT');
      await controllerAdmin.close();
    }
    await waitFor('the topic gone from every broker', async () => {
      for (const b of brokers) if ((await partitionView(b, topic)) !== undefined) return undefined;
      return true;
    });
    await waitFor('no reassignment listed', async () =>
      (await admin.listPartitionReassignments()).length === 0 ? true : undefined,
    );
    await waitFor('every copy of the partition deleted', async () =>
      brokers.some((b) => existsSync(join(b.dataDir, `${topic}-0`))) ? undefined : true,
    ).catch((e: Error) => {
      const logs = [controllerId, source, added].map(
        (id) => `--- broker ${id} log ---\n${relevantLines(brokers[id]!.log(), topic)}`,
      );
      throw new Error(`${e.message}\n${logs.join('\n')}`);
    });
    // The name can be used again, for a topic that starts empty.
    await createTopic(topic, [added]);
    assert.deepEqual(await readValues(brokers[added]!, topic), []);
  });

  it('moves a follower away with the CLI, then a preferred election moves leadership to the first replica', async () => {
    const topic = 'cli-moved';
    const [leader, removed] = others as [number, number];
    await createTopic(topic, [leader, removed]);
    const written = values(0, 50);
    assert.deepEqual(
      await produceValues(brokers[leader]!, topic, written),
      written.map(() => ErrorCode.NONE),
    );
    const target = [controllerId, leader];
    const file = reassignmentFile('move.json', [{ topic, partition: 0, replicas: target }]);
    const bootstrap = brokers[leader]!.bootstrap;
    const executed = await brook(
      'reassign-partitions',
      '--bootstrap-server',
      bootstrap,
      '--execute',
      '--reassignment-json-file',
      file,
    );
    assert.equal(executed.code, 0, executed.stderr);
    assert.ok(
      executed.stdout.startsWith(
        `Current partition replica assignment\n\n{"version":1,"partitions":[{"topic":"${topic}","partition":0,"replicas":[${leader},${removed}],"log_dirs":["any","any"]}]}\n\nSave this to use as the --reassignment-json-file option during rollback\n`,
      ),
      executed.stdout,
    );
    await waitFor('--verify to report completion', async () => {
      const verified = await brook(
        'reassign-partitions',
        '--bootstrap-server',
        bootstrap,
        '--verify',
        '--reassignment-json-file',
        file,
      );
      return verified.stdout.startsWith(
        `Status of partition reassignment:\nReassignment of partition ${topic}-0 is completed.\nClearing broker-level throttles`,
      )
        ? true
        : undefined;
    });
    const listed = await brook('reassign-partitions', '--bootstrap-server', bootstrap, '--list');
    assert.equal(listed.stdout, 'No partition reassignments found.\n');
    const moved = await waitFor('the new replica set in metadata', async () => {
      const v = await partitionView(brokers[removed]!, topic);
      return v?.replicaNodes.join(',') === target.join(',') && v.isrNodes.length === 2 ? v : undefined;
    });
    assert.equal(moved.leaderId, leader, 'the leader is a target replica, so it keeps leading');
    await waitFor('the removed follower to delete its copy', async () =>
      existsSync(join(brokers[removed]!.dataDir, `${topic}-0`)) ? undefined : true,
    );

    const elected = await brook(
      'leader-election',
      '--bootstrap-server',
      bootstrap,
      '--election-type',
      'PREFERRED',
      '--topic',
      topic,
      '--partition',
      '0',
    );
    assert.equal(elected.code, 0, elected.stderr);
    assert.equal(
      elected.stdout,
      `Successfully completed leader election (PREFERRED) for partitions ${topic}-0\n`,
    );
    const preferred = await waitFor('the preferred replica to lead', async () => {
      const v = await partitionView(brokers[leader]!, topic);
      return v?.leaderId === controllerId ? v : undefined;
    });
    assert.ok(preferred.leaderEpoch > moved.leaderEpoch);
    // For all partitions the broker leaves out those whose election is not needed (as Kafka's
    // handleElectLeaders), so the tool names nothing; asked for the partition, it says it is already elected.
    const again = await brook(
      'leader-election',
      '--bootstrap-server',
      bootstrap,
      '--election-type',
      'preferred',
      '--all-topic-partitions',
    );
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stdout, new RegExp(`${topic}-0`));
    const named = await brook(
      'leader-election',
      '--bootstrap-server',
      bootstrap,
      '--election-type',
      'preferred',
      '--topic',
      topic,
      '--partition',
      '0',
    );
    assert.equal(named.code, 0, named.stderr);
    assert.match(named.stdout, new RegExp(`Valid replica already elected for partitions .*${topic}-0`));
    assert.deepEqual(
      await readValues(brokers[controllerId]!, topic),
      written,
      'every record on the new leader',
    );
  });

  it('lists a dead broker that had already left the ISR among the offline replicas', async () => {
    const topic = 'offline';
    // The victim is not PAUSED, so its short session lets the controller see it die in about 10 s.
    const [victim, leader] = others as [number, number];
    await createTopic(topic, [leader, victim, controllerId]);
    process.kill(brokers[victim]!.pid, 'SIGSTOP');
    // acks=all waits until the leader has dropped the silent follower (replica.lag.time.max.ms) from the ISR.
    assert.deepEqual(await produceValues(brokers[leader]!, topic, ['o0']), [ErrorCode.NONE]);
    const shrunk = await waitFor('the ISR without the paused broker', async () => {
      const v = await partitionView(brokers[controllerId]!, topic);
      return v !== undefined && !v.isrNodes.includes(victim) ? v : undefined;
    });
    assert.deepEqual(shrunk.offlineReplicas, []);
    await brokers[victim]!.kill();
    await waitFor('the controller to see the broker gone', async () =>
      (await liveBrokers(brokers[controllerId]!)).includes(victim) ? undefined : true,
    );
    const offline = await waitFor('the dead broker among the offline replicas', async () => {
      const v = await partitionView(brokers[leader]!, topic);
      return v?.offlineReplicas.includes(victim) ? v : undefined;
    });
    assert.deepEqual(offline.offlineReplicas, [victim]);
    assert.equal(offline.leaderId, leader, 'leadership did not change');
    assert.equal(offline.leaderEpoch, shrunk.leaderEpoch);
    assert.deepEqual(offline.isrNodes, shrunk.isrNodes);
  });
});
