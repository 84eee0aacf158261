// The PostgreSQL sink through failures, against a real PostgreSQL and a three-broker cluster, with
// `brook connect-standalone` processes: rows keep arriving on a replicated topic (replication factor 3,
// min.insync.replicas 2) while the worker running the upserting sink is killed with SIGKILL in the middle of the
// stream (its consumer offsets not committed since it started, so everything it wrote is delivered again) and
// started again, and then while the broker leading the topic is killed. The table ends with exactly the rows
// produced, compared row by row: upserts make the redelivery harmless, and nothing acknowledged is lost.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { Admin, Producer } from '../../src/client/index.js';
import { agreedController, partitionView, waitFor } from '../helpers/cluster.js';
import { type ConnectWorker, rest, startConnectWorker } from '../helpers/connect-worker.js';
import { type PostgresServer, startPostgres } from '../helpers/postgres.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { sleep } from '../helpers/wait.js';

const TOPIC = 'pg-failover';
const ROWS = 3000;

let cluster: TestCluster;
let postgres: PostgresServer;
let db: pg.Client;
let dir: string;
const workers: ConnectWorker[] = [];

before(async () => {
  [cluster, postgres] = await Promise.all([
    startCluster({
      brokers: 3,
      overrides: {
        'min.insync.replicas': 2,
        'offsets.topic.replication.factor': 3,
        'group.initial.rebalance.delay.ms': 0,
      },
    }),
    startPostgres(),
  ]);
  db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-pg-failover-'));
});

after(async () => {
  for (const w of workers) await w.kill().catch(() => {});
  await db?.end();
  await postgres?.stop();
  await cluster?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** A row as JsonConverter with schemas writes it: the sink needs a struct with a schema. */
function rowValue(id: number): Buffer {
  return Buffer.from(
    JSON.stringify({
      schema: {
        type: 'struct',
        name: 'row',
        optional: false,
        fields: [
          { field: 'id', type: 'int32', optional: false },
          { field: 'name', type: 'string', optional: false },
          { field: 'amount', type: 'int64', optional: true },
        ],
      },
      payload: { id, name: `row ${id}`, amount: id % 11 === 0 ? null : id * 1_000_003 },
    }),
    'utf8',
  );
}

async function tableCount(): Promise<number> {
  const exists = await db.query("SELECT to_regclass('pg_failover') AS t");
  if (exists.rows[0].t === null) return 0;
  return (await db.query('SELECT count(*)::int AS n FROM pg_failover')).rows[0].n;
}

async function waitForRows(n: number, timeoutMs: number, worker: () => ConnectWorker): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await tableCount()) < n) {
    if (Date.now() > deadline) {
      const w = worker();
      const status = await rest(w.url, 'GET', '/connectors?expand=status').catch((e) => String(e));
      assert.fail(
        `timed out waiting for ${n} rows (have ${await tableCount()})\n${JSON.stringify(status)}\n${w.stderr().slice(-3000)}`,
      );
    }
    await sleep(250);
  }
}

function startWorker(): Promise<ConnectWorker> {
  return startConnectWorker(
    dir,
    {
      'bootstrap.servers': cluster.bootstrap,
      'offset.storage.file.filename': join(dir, 'connect.offsets'),
      'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
      'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
      'value.converter.schemas.enable': 'true',
      // Sink offsets are committed only when the worker stops: the kill -9 leaves none, so everything the first
      // worker wrote comes again to the second.
      'offset.flush.interval.ms': 600_000,
      'consumer.max.poll.records': 100,
      'consumer.session.timeout.ms': 6000,
      'consumer.heartbeat.interval.ms': 1000,
    },
    [
      {
        name: 'pg-failover-sink',
        'connector.class': 'JdbcSinkConnector',
        'connection.url': postgres.jdbcUrl,
        'connection.user': postgres.user,
        topics: TOPIC,
        'table.name.format': 'pg_failover',
        'insert.mode': 'upsert',
        'pk.mode': 'record_value',
        'pk.fields': 'id',
        'auto.create': 'true',
        'batch.size': '50',
        'max.retries': '100',
        'retry.backoff.ms': '500',
      },
    ],
  );
}

test('the upserting sink writes exactly the produced rows through a kill -9 of its worker and of the topic leader', async () => {
  const controllerId = await agreedController(cluster.brokers);
  const admin = new Admin({ bootstrapServers: cluster.brokers[controllerId]!.bootstrap });
  try {
    const [created] = await admin.createTopics([{ topic: TOPIC, numPartitions: 1, replicationFactor: 3 }]);
    assert.equal(created!.error, null);
    await waitFor(
      'every replica in sync',
      async () =>
        (await admin.describeTopics([TOPIC]))[0]!.partitions[0]!.isr.length === 3 ? true : undefined,
      60_000,
    );
  } finally {
    await admin.close();
  }

  // Rows are produced in the background all along, each acknowledged by acks=all; a send that fails while the
  // leader changes is sent again (a duplicate is the same row).
  const producer = new Producer({
    bootstrapServers: cluster.bootstrap,
    acks: -1,
    deliveryTimeoutMs: 30_000,
    requestTimeoutMs: 10_000,
  });
  let produced = 0;
  let stopProducing = false;
  const producing = (async () => {
    while (produced < ROWS && !stopProducing) {
      const batch = Array.from({ length: Math.min(25, ROWS - produced) }, (_, i) => produced + i);
      try {
        await Promise.all(
          batch.map((id) =>
            producer.send({ topic: TOPIC, key: Buffer.from(String(id)), value: rowValue(id) }),
          ),
        );
        produced += batch.length;
      } catch {
        await sleep(500);
        continue;
      }
      await sleep(20);
    }
  })();

  try {
    let worker = await startWorker();
    workers.push(worker);
    // Killed in the middle: some rows written, more on their way.
    await waitForRows(300, 120_000, () => worker);
    await worker.kill();
    const atKill = await tableCount();
    assert.ok(atKill < ROWS, `the worker was killed before the end (${atKill} rows)`);

    worker = await startWorker();
    workers.push(worker);
    await waitForRows(Math.min(atKill + 500, ROWS - 500), 120_000, () => worker);

    // Now the broker leading the topic dies: the producer and the sink's consumer move to the new leader.
    const view = await partitionView(cluster.brokers[controllerId]!, TOPIC);
    assert.ok(view !== undefined && view.leaderId >= 0);
    const leader = cluster.brokers[view.leaderId]!;
    await leader.kill();
    const survivor = cluster.brokers.find((b) => b.brokerId !== view.leaderId)!;
    await waitFor(
      'a new leader of the topic',
      async () => {
        const v = await partitionView(survivor, TOPIC);
        return v !== undefined && v.leaderId >= 0 && v.leaderId !== view.leaderId ? true : undefined;
      },
      60_000,
    );

    await producing;
    assert.equal(produced, ROWS);
    await waitForRows(ROWS, 180_000, () => worker);
    // The task survived both failures (a failed task would have stopped short of the last rows anyway).
    const status = await rest(worker.url, 'GET', '/connectors/pg-failover-sink/status');
    assert.deepEqual(
      (status.body as { tasks: { state: string }[] }).tasks.map((t) => t.state),
      ['RUNNING'],
      JSON.stringify(status.body),
    );
    const rows = await db.query({
      text: 'SELECT id::text, name, amount::text FROM pg_failover ORDER BY pg_failover.id',
      rowMode: 'array',
    });
    const expected = Array.from({ length: ROWS }, (_, id) => [
      String(id),
      `row ${id}`,
      id % 11 === 0 ? null : String(id * 1_000_003),
    ]);
    assert.equal(rows.rows.length, ROWS);
    assert.deepEqual(rows.rows, expected);
  } finally {
    stopProducing = true;
    await producing.catch(() => {});
    await producer.close(1000);
  }
});
