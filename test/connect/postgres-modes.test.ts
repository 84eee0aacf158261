// The JDBC-style source's `timestamp` mode and `query` mode and the sink's `pk.mode=kafka` with plain inserts,
// against a real PostgreSQL and a broker process through `brook connect-standalone`: a table read by its
// timestamp column alone carries inserts and later updates into a copy kept by upserts; a query (the even rows
// of a table) read incrementally lands on the topic named by topic.prefix alone, and the sink inserts each record
// once keyed by its topic, partition and offset (__connect_topic, __connect_partition, __connect_offset); bulk mode
// reads the whole table on every poll, insert.mode=update changes only rows that exist, and pk.mode=none appends
// every record to a table without a key.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { type ConnectWorker, rest, startConnectWorker } from '../helpers/connect-worker.js';
import type { PostgresServer } from '../helpers/postgres.js';
import { sleep } from '../helpers/wait.js';
import { standaloneWorkerProps, startPostgresConnect, stopPostgresConnect } from './postgres-setup.js';

let broker: BrokerProcess;
let postgres: PostgresServer;
let worker: ConnectWorker;
let db: pg.Client;
let dir: string;

before(async () => {
  const env = await startPostgresConnect('brook-connect-pg-modes-');
  ({ broker, postgres, db, dir } = env);
  worker = await startConnectWorker(dir, standaloneWorkerProps(env));
});

after(async () => {
  await worker?.stop();
  await stopPostgresConnect({ broker, postgres, db, dir });
});

/** Rows as text arrays, ordered by the first column (named with its table, not an output alias). */
async function rows(sql: string): Promise<(string | null)[][]> {
  return (await db.query({ text: sql, rowMode: 'array' })).rows as (string | null)[][];
}

/** Waits until `sql` gives `expected` (compared as JSON), then asserts it; the failure shows the worker's log. */
async function waitForRows(sql: string, expected: (string | null)[][], timeoutMs = 40_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await rows(sql).catch(() => null);
    if (got !== null && JSON.stringify(got) === JSON.stringify(expected)) return;
    if (Date.now() > deadline) {
      const status = await rest(worker.url, 'GET', '/connectors?expand=status');
      assert.deepEqual(got, expected, `${JSON.stringify(status.body)}\n${worker.stderr().slice(-3000)}`);
      return;
    }
    await sleep(250);
  }
}

async function created(name: string, config: Record<string, string>): Promise<void> {
  const res = await rest(worker.url, 'POST', '/connectors', { name, config });
  assert.equal(res.status, 201, JSON.stringify(res.body));
}

test('timestamp mode carries inserts and updates by the timestamp column alone', async () => {
  await db.query(`CREATE TABLE events (id INT PRIMARY KEY, note TEXT NOT NULL,
    modified TIMESTAMP(3) NOT NULL DEFAULT clock_timestamp())`);
  for (let i = 1; i <= 12; i++)
    await db.query('INSERT INTO events (id, note) VALUES ($1, $2)', [i, `note ${i}`]);
  await created('events-source', {
    'connector.class': 'PostgresSource',
    'connection.url': `${postgres.jdbcUrl}?user=${postgres.user}`,
    'table.whitelist': 'events',
    mode: 'timestamp',
    'timestamp.column.name': 'modified',
    'topic.prefix': 'pgm-',
    'poll.interval.ms': '200',
  });
  await created('events-sink', {
    'connector.class': 'PostgresSink',
    'connection.url': `${postgres.jdbcUrl}?user=${postgres.user}`,
    topics: 'pgm-events',
    'table.name.format': 'events_copy',
    'insert.mode': 'upsert',
    'pk.mode': 'record_value',
    'pk.fields': 'id',
    'auto.create': 'true',
  });
  const copy = 'SELECT id::text, note, modified::text FROM events_copy ORDER BY events_copy.id';
  const original = 'SELECT id::text, note, modified::text FROM events ORDER BY events.id';
  await waitForRows(copy, await rows(original));

  // Updated rows get a later timestamp: only they are read again, and the upserts apply them.
  await db.query(
    `UPDATE events SET note = note || ' (edited)', modified = clock_timestamp() WHERE id % 4 = 0`,
  );
  await db.query(`INSERT INTO events (id, note) VALUES (13, 'note 13')`);
  const expected = await rows(original);
  assert.equal(expected.filter((r) => r[1]!.endsWith('(edited)')).length, 3);
  await waitForRows(copy, expected);
});

test('a query read incrementally lands on the topic.prefix topic; pk.mode=kafka inserts each record once', async () => {
  await db.query(`CREATE TABLE items (id SERIAL PRIMARY KEY, label TEXT NOT NULL)`);
  for (let i = 1; i <= 20; i++) await db.query('INSERT INTO items (label) VALUES ($1)', [`item ${i}`]);
  await created('evens-source', {
    'connector.class': 'io.confluent.connect.jdbc.JdbcSourceConnector',
    'connection.url': `${postgres.jdbcUrl}?user=${postgres.user}`,
    query: 'SELECT id, label FROM items WHERE id % 2 = 0',
    mode: 'incrementing',
    'incrementing.column.name': 'id',
    'topic.prefix': 'pgm-evens',
    'poll.interval.ms': '200',
    'batch.max.rows': '4',
  });
  await created('evens-sink', {
    'connector.class': 'io.confluent.connect.jdbc.JdbcSinkConnector',
    'connection.url': `${postgres.jdbcUrl}?user=${postgres.user}`,
    topics: 'pgm-evens',
    'table.name.format': 'evens_copy',
    'insert.mode': 'insert',
    'pk.mode': 'kafka',
    'auto.create': 'true',
    'batch.size': '3',
  });
  const copy = `SELECT __connect_topic, __connect_partition::text, __connect_offset::text, id::text, label
    FROM evens_copy ORDER BY evens_copy.__connect_offset`;
  const expectedFor = (ids: number[]) =>
    ids.map((id, offset) => ['pgm-evens', '0', String(offset), String(id), `item ${id}`]);
  const evens = (to: number) => Array.from({ length: to / 2 }, (_, i) => (i + 1) * 2);
  await waitForRows(copy, expectedFor(evens(20)));

  // New rows: only the new even ones follow, each inserted once after the ones before.
  for (let i = 21; i <= 30; i++) await db.query('INSERT INTO items (label) VALUES ($1)', [`item ${i}`]);
  await waitForRows(copy, expectedFor(evens(30)));
  const key = await db.query(
    `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
      WHERE i.indrelid = 'evens_copy'::regclass AND i.indisprimary ORDER BY a.attname`,
  );
  assert.deepEqual(
    key.rows.map((r) => r.attname),
    ['__connect_offset', '__connect_partition', '__connect_topic'],
  );
});

test('bulk mode reads the whole table each poll; insert.mode=update changes existing rows only; pk.mode=none appends', async () => {
  await db.query(`CREATE TABLE prices (id INT PRIMARY KEY, price INT NOT NULL)`);
  await db.query(`INSERT INTO prices VALUES (1, 10), (2, 20), (3, 30)`);
  // The update target has rows 1 and 2 (to change) and 99 (to keep); row 3 must not appear: update never inserts.
  await db.query(`CREATE TABLE prices_target (id INT PRIMARY KEY, price INT NOT NULL)`);
  await db.query(`INSERT INTO prices_target VALUES (1, 0), (2, 0), (99, 7)`);
  await created('prices-source', {
    'connector.class': 'PostgresSource',
    'connection.url': `${postgres.jdbcUrl}?user=${postgres.user}`,
    'table.whitelist': 'prices',
    mode: 'bulk',
    'topic.prefix': 'pgm-',
    'poll.interval.ms': '500',
  });
  await created('prices-update-sink', {
    'connector.class': 'PostgresSink',
    'connection.url': `${postgres.jdbcUrl}?user=${postgres.user}`,
    topics: 'pgm-prices',
    'table.name.format': 'prices_target',
    'insert.mode': 'update',
    'pk.mode': 'record_value',
    'pk.fields': 'id',
  });
  await created('prices-log-sink', {
    'connector.class': 'PostgresSink',
    'connection.url': `${postgres.jdbcUrl}?user=${postgres.user}`,
    topics: 'pgm-prices',
    'table.name.format': 'prices_log',
    'insert.mode': 'insert',
    'pk.mode': 'none',
    'auto.create': 'true',
  });
  await waitForRows('SELECT id::text, price::text FROM prices_target ORDER BY prices_target.id', [
    ['1', '10'],
    ['2', '20'],
    ['99', '7'],
  ]);
  // Bulk reads the table again on every poll, and the key-less sink appends every copy: at least two whole reads.
  const deadline = Date.now() + 40_000;
  let logged: (string | null)[][] = [];
  while (Date.now() < deadline) {
    logged = await rows('SELECT id::text, price::text FROM prices_log').catch(() => []);
    if (logged.length >= 6) break;
    await sleep(250);
  }
  assert.ok(logged.length >= 6, `${logged.length} rows in prices_log\n${worker.stderr().slice(-3000)}`);
  const source = new Set(['1,10', '2,20', '3,30']);
  for (const r of logged) assert.ok(source.has(r.join(',')), `unexpected row ${r.join(',')}`);
  const key = await db.query(
    `SELECT 1 FROM pg_index WHERE indrelid = 'prices_log'::regclass AND indisprimary`,
  );
  assert.equal(key.rows.length, 0, 'pk.mode=none creates no primary key');
});
