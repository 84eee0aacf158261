// Reads one table (or the configured query) incrementally, as the JDBC source connector's queriers do:
//   bulk                    SELECT * FROM t                                   (everything, every poll)
//   incrementing            ... WHERE inc > $last ORDER BY inc LIMIT n
//   timestamp               ... WHERE ts > $last AND ts < now - delay ORDER BY ts
//   timestamp+incrementing  ... WHERE ts < now - delay AND ((ts = $lastTs AND inc > $lastInc) OR ts > $lastTs)
//                               ORDER BY ts, inc LIMIT n
// Each row becomes a record with a struct value (schema named after the table, one field per column, optional
// when the column is nullable), the source partition {"table": name} (or {"query": text}) and the offset
// {"incrementing": n} / {"timestamp": ms, "timestamp_nanos": ns} / both, from which a restarted task goes on.

import type pg from 'pg';
import type { SourceOffset, SourcePartition } from '../../api/records.js';
import { SourceRecord } from '../../api/records.js';
import { type Schema, SchemaBuilder } from '../../data/schema.js';
import { Struct } from '../../data/struct.js';
import { ConnectException } from '../../errors.js';
import { quoteIdent, quoteTable, splitTable } from './connection.js';
import type { SourceConfig } from './source-config.js';
import {
  type ColumnInfo,
  columnOfOid,
  columnSchema,
  fromText,
  parseTimestamp,
  timestampText,
} from './types.js';

interface Position {
  incrementing: bigint | null;
  timestampMs: number | null;
  timestampNanos: number;
}

export class TableQuerier {
  private schema: Schema | null = null;
  private position: Position;
  nextPollMs = 0;

  constructor(
    private readonly c: SourceConfig,
    /** A table name, or null for the configured query. */
    readonly table: string | null,
    stored: SourceOffset | null,
  ) {
    this.position = positionOf(stored);
  }

  get partition(): SourcePartition {
    return this.table === null ? { query: this.c.query } : { table: this.table };
  }

  private get topic(): string {
    return this.table === null ? this.c.topicPrefix : `${this.c.topicPrefix}${this.table}`;
  }

  /** Reads the rows after the current position; moves the position past them. */
  async poll(client: pg.PoolClient): Promise<SourceRecord[]> {
    if (this.schema === null) this.schema = await this.describe(client);
    const { sql, params } = this.statement();
    const res = await client.query({ text: sql, values: params });
    const schema = this.schema;
    const out: SourceRecord[] = [];
    for (const row of res.rows as Record<string, unknown>[]) {
      const struct = new Struct(schema);
      for (const f of schema.fields()) struct.put(f.name, fromText(f.schema, row[f.name]));
      this.advance(row);
      out.push(
        new SourceRecord({
          sourcePartition: this.partition,
          sourceOffset: this.offset(),
          topic: this.topic,
          valueSchema: schema,
          value: struct,
        }),
      );
    }
    return out;
  }

  /** Whether the last poll may have left rows behind (it returned a full page). */
  static fullPage(c: SourceConfig, rows: number): boolean {
    return (c.mode === 'incrementing' || c.mode === 'timestamp+incrementing') && rows >= c.batchMaxRows;
  }

  private statement(): { sql: string; params: unknown[] } {
    const from = this.table === null ? `(${this.c.query}) AS brook_query` : quoteTable(this.table);
    const inc = quoteIdent(this.c.incrementingColumn);
    const ts = quoteIdent(this.c.timestampColumn);
    const now = `LOCALTIMESTAMP - ($1::bigint * interval '1 millisecond')`;
    const limit = this.c.batchMaxRows;
    const lastTs = timestampText(this.position.timestampMs ?? 0, this.position.timestampNanos);
    const lastInc = (this.position.incrementing ?? -1n).toString();
    switch (this.c.mode) {
      case 'bulk':
        return { sql: `SELECT * FROM ${from}`, params: [] };
      case 'incrementing':
        return {
          sql: `SELECT * FROM ${from} WHERE ${inc} > $1 ORDER BY ${inc} ASC LIMIT ${limit}`,
          params: [lastInc],
        };
      case 'timestamp':
        return {
          sql: `SELECT * FROM ${from} WHERE ${ts} > $2 AND ${ts} < ${now} ORDER BY ${ts} ASC`,
          params: [this.c.timestampDelayMs, lastTs],
        };
      case 'timestamp+incrementing':
        return {
          sql: `SELECT * FROM ${from} WHERE ${ts} < ${now} AND ((${ts} = $2 AND ${inc} > $3) OR ${ts} > $2) ORDER BY ${ts}, ${inc} ASC LIMIT ${limit}`,
          params: [this.c.timestampDelayMs, lastTs, lastInc],
        };
    }
  }

  private advance(row: Record<string, unknown>): void {
    if (this.c.mode === 'incrementing' || this.c.mode === 'timestamp+incrementing') {
      const v = row[this.c.incrementingColumn];
      if (v === null || v === undefined)
        throw new ConnectException(`Null value in incrementing column ${this.c.incrementingColumn}`);
      this.position.incrementing = BigInt(String(v));
    }
    if (this.c.mode === 'timestamp' || this.c.mode === 'timestamp+incrementing') {
      const v = row[this.c.timestampColumn];
      if (v === null || v === undefined)
        throw new ConnectException(`Null value in timestamp column ${this.c.timestampColumn}`);
      const t = parseTimestamp(String(v));
      this.position.timestampMs = t.date.getTime();
      this.position.timestampNanos = t.nanos;
    }
  }

  private offset(): SourceOffset | null {
    const out: SourceOffset = {};
    const inc = this.position.incrementing;
    if (inc !== null)
      out.incrementing =
        inc >= BigInt(Number.MIN_SAFE_INTEGER) && inc <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(inc) : inc;
    if (this.position.timestampMs !== null) {
      out.timestamp = this.position.timestampMs;
      out.timestamp_nanos = this.position.timestampNanos;
    }
    return this.c.mode === 'bulk' ? null : out;
  }

  /** The value schema: the table's columns (nullability from the catalog), or the query's result columns. */
  private async describe(client: pg.PoolClient): Promise<Schema> {
    let columns: ColumnInfo[];
    let name: string;
    if (this.table !== null) {
      const { schema, table } = splitTable(this.table);
      const res = await client.query<Record<string, string | null>>(
        `SELECT column_name, data_type, is_nullable, numeric_precision, numeric_scale FROM information_schema.columns
         WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
        [schema, table],
      );
      if (res.rows.length === 0)
        throw new ConnectException(`Table ${this.table} does not exist or has no columns`);
      columns = res.rows.map((r) => ({
        name: r.column_name!,
        dataType: r.data_type!,
        nullable: r.is_nullable === 'YES',
        numericPrecision: r.numeric_precision === null ? null : Number(r.numeric_precision),
        numericScale: r.numeric_scale === null ? null : Number(r.numeric_scale),
      }));
      name = table;
    } else {
      columns = await queryColumns(client, this.c.query);
      name = 'query';
    }
    this.checkColumns(columns);
    const b = SchemaBuilder.struct().name(name);
    for (const c of columns) b.field(c.name, columnSchema(c, this.c.numericMapping));
    return b.build();
  }

  private checkColumns(columns: ColumnInfo[]): void {
    const need: string[] = [];
    if (this.c.mode === 'incrementing' || this.c.mode === 'timestamp+incrementing')
      need.push(this.c.incrementingColumn);
    if (this.c.mode === 'timestamp' || this.c.mode === 'timestamp+incrementing')
      need.push(this.c.timestampColumn);
    for (const n of need) {
      const col = columns.find((c) => c.name === n);
      const what = this.table ?? 'the query';
      if (col === undefined) throw new ConnectException(`Column ${n} does not exist in ${what}`);
      if (this.c.validateNonNull && col.nullable && this.table !== null) {
        throw new ConnectException(
          `Cannot make incremental queries using column ${n} on ${what} because this column is nullable.`,
        );
      }
    }
  }
}

function positionOf(stored: SourceOffset | null): Position {
  const inc = stored?.incrementing;
  const ts = stored?.timestamp;
  return {
    incrementing: typeof inc === 'number' || typeof inc === 'bigint' ? BigInt(inc) : null,
    timestampMs: typeof ts === 'number' ? ts : typeof ts === 'bigint' ? Number(ts) : null,
    timestampNanos: typeof stored?.timestamp_nanos === 'number' ? stored.timestamp_nanos : 0,
  };
}

/** Result columns of a query, from the row description of a run that returns nothing. */
async function queryColumns(client: pg.PoolClient, query: string): Promise<ColumnInfo[]> {
  const res = await client.query(`SELECT * FROM (${query}) AS brook_query LIMIT 0`);
  return res.fields.map((f) => columnOfOid(f.name, f.dataTypeID, f.dataTypeModifier, true));
}
