// The PostgreSQL connectors against a real PostgreSQL (started by the test, never mocked) and a broker
// process, through `brook connect-standalone`: a table copied to a topic by the JDBC-style source and back into
// another table by the sink, compared row by row (numerics, dates, timestamps, NULLs, bytea, int8 beyond
// 2^53); updates carried by timestamp+incrementing and applied by upserts; deletes from tombstones, a column
// added by auto.evolve, and configs the sink cannot honour refused with the validation errors.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { Producer } from '../../src/client/index.js';
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
  const env = await startPostgresConnect('brook-connect-pg-');
  ({ broker, postgres, db, dir } = env);
  worker = await startConnectWorker(dir, standaloneWorkerProps(env));
});

after(async () => {
  await worker?.stop();
  await stopPostgresConnect({ broker, postgres, db, dir });
});

/** Every row as text, columns in the given order, ordered by the first column. */
async function rowsOf(table: string, columns: string[]): Promise<string[][]> {
  const res = await db.query({
    text: `SELECT ${columns.map((c) => `"${c}"::text`).join(', ')} FROM ${table} ORDER BY ${table}."${columns[0]}"`,
    rowMode: 'array',
  });
  return res.rows as string[][];
}

async function waitForCount(table: string, n: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exists = await db.query('SELECT to_regclass($1) AS t', [table]);
    if (exists.rows[0].t !== null) {
      const c = await db.query(`SELECT count(*)::int AS n FROM ${table}`);
      if (c.rows[0].n === n) return;
      if (c.rows[0].n > n) assert.fail(`${table} has ${c.rows[0].n} rows, expected ${n}`);
    }
    if (Date.now() > deadline) {
      const status = await rest(worker.url, 'GET', '/connectors?expand=status');
      assert.fail(
        `timed out waiting for ${n} rows in ${table}\n${JSON.stringify(status.body)}\n${worker.stderr().slice(-3000)}`,
      );
    }
    await sleep(200);
  }
}

const ORDER_COLUMNS = [
  'id',
  'customer',
  'amount',
  'placed',
  'updated_at',
  'paid',
  'quantity',
  'note',
  'blob',
];

async function insertOrders(from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    await db.query(
      `INSERT INTO orders (customer, amount, placed, updated_at, paid, quantity, note, blob) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        `customer ${i} — ünïcode '"`,
        i % 7 === 0 ? null : `${i}.${String(i % 100).padStart(2, '0')}`,
        `2024-02-${String((i % 28) + 1).padStart(2, '0')}`,
        `2024-03-01 12:00:${String(i % 60).padStart(2, '0')}.${String(i % 1000).padStart(3, '0')}`,
        i % 3 === 0,
        i === from ? '9007199254740993' : String(i * 1_000_003),
        i % 5 === 0 ? null : `note ${i}`,
        i % 4 === 0 ? null : Buffer.from([i % 256, 0, 255]),
      ],
    );
  }
}

test('table -> topic -> table: every row arrives, equal column by column', async () => {
  await db.query(`CREATE TABLE orders (
    id SERIAL PRIMARY KEY, customer TEXT NOT NULL, amount NUMERIC(12,2), placed DATE NOT NULL,
    updated_at TIMESTAMP(3) NOT NULL, paid BOOLEAN NOT NULL, quantity BIGINT NOT NULL, note TEXT, blob BYTEA)`);
  await insertOrders(1, 250);
  const source = await rest(worker.url, 'PUT', '/connectors/orders-source/config', {
    'connector.class': 'io.confluent.connect.jdbc.JdbcSourceConnector',
    'connection.url': postgres.jdbcUrl,
    'connection.user': postgres.user,
    'table.whitelist': 'orders',
    mode: 'incrementing',
    'incrementing.column.name': 'id',
    'topic.prefix': 'pg-',
    'poll.interval.ms': '200',
    'batch.max.rows': '100',
  });
  assert.equal(source.status, 201, JSON.stringify(source.body));
  const sink = await rest(worker.url, 'PUT', '/connectors/orders-sink/config', {
    'connector.class': 'PostgresSinkConnector',
    'connection.url': postgres.jdbcUrl,
    'connection.user': postgres.user,
    topics: 'pg-orders',
    'table.name.format': 'orders_copy',
    'insert.mode': 'upsert',
    'pk.mode': 'record_value',
    'pk.fields': 'id',
    'auto.create': 'true',
    'batch.size': '64',
  });
  assert.equal(sink.status, 201, JSON.stringify(sink.body));
  await waitForCount('orders_copy', 250);
  assert.deepEqual(await rowsOf('orders_copy', ORDER_COLUMNS), await rowsOf('orders', ORDER_COLUMNS));
  const big = await db.query(`SELECT quantity::text AS q FROM orders_copy WHERE id = 1`);
  assert.equal(big.rows[0].q, '9007199254740993', 'int8 beyond 2^53 is exact');

  await insertOrders(251, 40);
  await waitForCount('orders_copy', 290);
  assert.deepEqual(await rowsOf('orders_copy', ORDER_COLUMNS), await rowsOf('orders', ORDER_COLUMNS));
  // The offset is committed within offset.flush.interval.ms (500 ms in these tests) of the last record.
  const expected = { offsets: [{ partition: { table: 'orders' }, offset: { incrementing: 290 } }] };
  const deadline = Date.now() + 10_000;
  let offsets = (await rest(worker.url, 'GET', '/connectors/orders-source/offsets')).body;
  while (JSON.stringify(offsets) !== JSON.stringify(expected) && Date.now() < deadline) {
    await sleep(200);
    offsets = (await rest(worker.url, 'GET', '/connectors/orders-source/offsets')).body;
  }
  assert.deepEqual(offsets, expected);
});

test('timestamp+incrementing carries updates, and the upserting sink applies them', async () => {
  await db.query(`CREATE TABLE accounts (id SERIAL PRIMARY KEY, owner TEXT NOT NULL, balance NUMERIC(10,2) NOT NULL,
    modified TIMESTAMP(3) NOT NULL DEFAULT clock_timestamp())`);
  for (let i = 1; i <= 30; i++)
    await db.query('INSERT INTO accounts (owner, balance) VALUES ($1, $2)', [`owner ${i}`, `${i}.50`]);
  const created = await Promise.all([
    rest(worker.url, 'POST', '/connectors', {
      name: 'accounts-source',
      config: {
        'connector.class': 'PostgresSource',
        'connection.url': `${postgres.jdbcUrl}?user=${postgres.user}`,
        'table.whitelist': 'accounts',
        mode: 'timestamp+incrementing',
        'incrementing.column.name': 'id',
        'timestamp.column.name': 'modified',
        'topic.prefix': 'pg-',
        'poll.interval.ms': '200',
        'batch.max.rows': '7',
      },
    }),
    rest(worker.url, 'POST', '/connectors', {
      name: 'accounts-sink',
      config: {
        'connector.class': 'JdbcSinkConnector',
        'connection.url': `${postgres.jdbcUrl}?user=${postgres.user}`,
        topics: 'pg-accounts',
        'table.name.format': 'accounts_copy',
        'insert.mode': 'upsert',
        'pk.mode': 'record_value',
        'pk.fields': 'id',
        'auto.create': 'true',
      },
    }),
  ]);
  for (const c of created) assert.equal(c.status, 201, JSON.stringify(c.body));
  const columns = ['id', 'owner', 'balance', 'modified'];
  await waitForCount('accounts_copy', 30);
  assert.deepEqual(await rowsOf('accounts_copy', columns), await rowsOf('accounts', columns));
  await db.query(
    `UPDATE accounts SET balance = balance + 1000, modified = clock_timestamp() WHERE id % 3 = 0`,
  );
  const deadline = Date.now() + 20_000;
  while (
    JSON.stringify(await rowsOf('accounts_copy', columns)) !==
    JSON.stringify(await rowsOf('accounts', columns))
  ) {
    if (Date.now() > deadline)
      assert.deepEqual(await rowsOf('accounts_copy', columns), await rowsOf('accounts', columns));
    await sleep(200);
  }
  const updated = await db.query(`SELECT count(*)::int AS n FROM accounts_copy WHERE balance > 1000`);
  assert.equal(updated.rows[0].n, 10);
});

test('the sink deletes on tombstones, adds columns with auto.evolve, and refuses configs it cannot honour', async () => {
  const refused = await rest(worker.url, 'POST', '/connectors', {
    name: 'bad-sink',
    config: {
      'connector.class': 'PostgresSink',
      'connection.url': postgres.jdbcUrl,
      topics: 'x',
      'delete.enabled': 'true',
      'pk.mode': 'record_value',
    },
  });
  assert.equal(refused.status, 400);
  assert.match(
    (refused.body as { message: string }).message,
    /Deletes are only supported for pk.mode record_key/,
  );

  const keySchema = {
    type: 'struct',
    fields: [{ type: 'int32', optional: false, field: 'id' }],
    optional: false,
    name: 'key',
  };
  const valueSchema = (withEmail: boolean) => ({
    type: 'struct',
    fields: [
      { type: 'int32', optional: false, field: 'id' },
      { type: 'string', optional: false, field: 'name' },
      ...(withEmail ? [{ type: 'string', optional: true, field: 'email' }] : []),
    ],
    optional: false,
    name: 'person',
  });
  const key = (id: number) => JSON.stringify({ schema: keySchema, payload: { id } });
  const value = (id: number, name: string, email?: string) =>
    JSON.stringify({
      schema: valueSchema(email !== undefined),
      payload: email === undefined ? { id, name } : { id, name, email },
    });
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  try {
    const send = (k: string, v: string | null) =>
      producer.send({ topic: 'people', key: Buffer.from(k), value: v === null ? null : Buffer.from(v) });
    for (let i = 1; i <= 10; i++) await send(key(i), value(i, `person ${i}`));
    await send(key(3), null);
    await send(key(4), value(4, 'renamed'));
    await send(key(7), null);
    await send(key(11), value(11, 'with email', 'p11@example.com'));
    await send(key(2), value(2, 'two again', 'p2@example.com'));
    await send(key(9), null);
  } finally {
    await producer.close();
  }
  const sink = await rest(worker.url, 'POST', '/connectors', {
    name: 'people-sink',
    config: {
      'connector.class': 'PostgresSinkConnector',
      'connection.url': postgres.jdbcUrl,
      'connection.user': postgres.user,
      topics: 'people',
      'insert.mode': 'upsert',
      'pk.mode': 'record_key',
      'delete.enabled': 'true',
      'auto.create': 'true',
      'auto.evolve': 'true',
    },
  });
  assert.equal(sink.status, 201, JSON.stringify(sink.body));
  await waitForCount('people', 8);
  // The last record of the topic has been applied when row 9 is gone.
  const deadline = Date.now() + 20_000;
  while ((await db.query('SELECT 1 FROM people WHERE id = 9')).rows.length > 0) {
    if (Date.now() > deadline) assert.fail('the last tombstone was not applied');
    await sleep(200);
  }
  assert.deepEqual(await rowsOf('people', ['id', 'name', 'email']), [
    ['1', 'person 1', null],
    ['2', 'two again', 'p2@example.com'],
    ['4', 'renamed', null],
    ['5', 'person 5', null],
    ['6', 'person 6', null],
    ['8', 'person 8', null],
    ['10', 'person 10', null],
    ['11', 'with email', 'p11@example.com'],
  ]);
  const pk =
    await db.query(`SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
    WHERE i.indrelid = 'people'::regclass AND i.indisprimary`);
  assert.deepEqual(
    pk.rows.map((r) => r.attname),
    ['id'],
  );
});
