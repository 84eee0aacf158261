// What the PostgreSQL connector tests start alike: a broker (one partition per topic), a PostgreSQL server, a
// client connected to it, and a directory for the standalone worker's files; stopped in reverse whatever happened.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { type PostgresServer, startPostgres } from '../helpers/postgres.js';

export interface PostgresConnect {
  broker: BrokerProcess;
  postgres: PostgresServer;
  db: pg.Client;
  dir: string;
}

export async function startPostgresConnect(dirPrefix: string): Promise<PostgresConnect> {
  const started = await Promise.allSettled([
    startBroker({ overrides: { 'num.partitions': 1 } }),
    startPostgres(),
  ]);
  const [b, p] = started;
  if (b.status === 'rejected' || p.status === 'rejected') {
    if (b.status === 'fulfilled') await b.value.stop();
    if (p.status === 'fulfilled') await p.value.stop();
    throw b.status === 'rejected' ? b.reason : (p as PromiseRejectedResult).reason;
  }
  const env: Partial<PostgresConnect> = { broker: b.value, postgres: p.value };
  try {
    const db = new pg.Client({ connectionString: p.value.url });
    await db.connect();
    env.db = db;
    env.dir = mkdtempSync(join(tmpdir(), dirPrefix));
    return env as PostgresConnect;
  } catch (err) {
    await stopPostgresConnect(env);
    throw err;
  }
}

export async function stopPostgresConnect(env: Partial<PostgresConnect>): Promise<void> {
  await env.db?.end();
  await env.postgres?.stop();
  await env.broker?.stop();
  if (env.dir !== undefined) rmSync(env.dir, { recursive: true, force: true });
}

/** The standalone worker's keys: the broker, and its offsets file in the test's directory. */
export function standaloneWorkerProps(
  env: PostgresConnect,
  extra: Record<string, string | number> = {},
): Record<string, string | number> {
  return {
    'bootstrap.servers': env.broker.bootstrap,
    'offset.storage.file.filename': join(env.dir, 'connect.offsets'),
    ...extra,
  };
}
