// PostgresSourceConnector: copies tables (or a query) into topics with the JDBC source connector's configs
// (source-config.ts). The connector lists the tables (table.whitelist, else every table of schema.pattern
// less table.blacklist) and spreads them over at most tasks.max tasks, each given its share as "tables". A
// task polls its tables in turn, each at most every poll.interval.ms (again at once after a full page), on a
// pooled connection.

import type pg from 'pg';
import type { ConfigValue } from '../../api/config-def.js';
import { SourceConnector, SourceTask, type TaskConfig } from '../../api/connector.js';
import type { SourceRecord } from '../../api/records.js';
import { ConnectException } from '../../errors.js';
import { InterruptibleSleep } from '../../runtime/interruptible-sleep.js';
import { BROOK_CONNECT_VERSION } from '../../version.js';
import { openPool } from './connection.js';
import {
  parseSourceConfig,
  type SourceConfig,
  sourceConfigDef,
  sourceConfigErrors,
} from './source-config.js';
import { TableQuerier } from './table-querier.js';

/** The longest a poll() waits for the next table's turn, so that pause and stop stay prompt. */
const POLL_WAIT_MAX_MS = 1000;

export class PostgresSourceConnector extends SourceConnector {
  static readonly className = 'brook.connect.postgres.PostgresSourceConnector';
  private props: Record<string, string> = {};
  private tables: string[] = [];

  version(): string {
    return BROOK_CONNECT_VERSION;
  }

  async start(props: Record<string, string>): Promise<void> {
    const c = parseSourceConfig(props);
    const errors = sourceConfigErrors(props);
    if (errors.length > 0) throw new ConnectException(errors.map((e) => e.message).join('; '));
    this.props = props;
    this.tables = c.query !== '' ? [] : await listTables(c);
  }

  taskClass() {
    return PostgresSourceTask;
  }

  taskConfigs(maxTasks: number): TaskConfig[] {
    if (this.props.query !== undefined && this.props.query.trim() !== '') return [{ ...this.props }];
    const groups = Math.min(maxTasks, this.tables.length);
    const out: TaskConfig[] = [];
    for (let g = 0; g < groups; g++) {
      out.push({ ...this.props, tables: this.tables.filter((_t, i) => i % groups === g).join(',') });
    }
    return out;
  }

  stop(): void {}

  config() {
    return sourceConfigDef();
  }

  override validate(props: Record<string, string>): ConfigValue[] {
    const values = sourceConfigDef().validate(props);
    for (const e of sourceConfigErrors(props)) values.find((v) => v.name === e.key)?.errors.push(e.message);
    return values;
  }
}

async function listTables(c: SourceConfig): Promise<string[]> {
  if (c.whitelist.length > 0) return [...c.whitelist];
  const pool = openPool({ url: c.url, user: c.user, password: c.password, poolSize: 1 });
  try {
    const res = await pool.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name`,
      [c.schemaPattern],
    );
    return res.rows.map((r) => r.table_name).filter((t) => !c.blacklist.includes(t));
  } finally {
    await pool.end();
  }
}

export class PostgresSourceTask extends SourceTask {
  private config!: SourceConfig;
  private pool: pg.Pool | null = null;
  private queriers: TableQuerier[] = [];
  private readonly pause = new InterruptibleSleep();

  version(): string {
    return BROOK_CONNECT_VERSION;
  }

  start(props: TaskConfig): void {
    this.config = parseSourceConfig(props);
    this.pool = openPool({
      url: this.config.url,
      user: this.config.user,
      password: this.config.password,
      poolSize: this.config.poolSize,
    });
    const reader = this.context.offsetStorageReader();
    const tables =
      this.config.query !== '' ? [null] : (props.tables ?? '').split(',').filter((t) => t !== '');
    this.queriers = tables.map((t) => {
      const partition = t === null ? { query: this.config.query } : { table: t };
      return new TableQuerier(this.config, t, reader.offset(partition));
    });
  }

  async poll(): Promise<SourceRecord[] | null> {
    if (this.queriers.length === 0) {
      await this.pause.sleep(POLL_WAIT_MAX_MS);
      return null;
    }
    const next = this.queriers.reduce((a, b) => (b.nextPollMs < a.nextPollMs ? b : a));
    const wait = next.nextPollMs - Date.now();
    if (wait > 0) {
      await this.pause.sleep(Math.min(wait, POLL_WAIT_MAX_MS));
      return null;
    }
    const client = await this.pool!.connect();
    let records: SourceRecord[];
    try {
      records = await next.poll(client);
    } finally {
      client.release();
    }
    next.nextPollMs = TableQuerier.fullPage(this.config, records.length)
      ? Date.now()
      : Date.now() + this.config.pollIntervalMs;
    return records;
  }

  async stop(): Promise<void> {
    this.pause.stop();
    await this.pool?.end();
    this.pool = null;
  }
}
