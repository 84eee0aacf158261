// Writes a batch of sink records to PostgreSQL in one transaction: each record is mapped to a table
// (table.name.format), its key columns (pk.mode, pk.fields) and value columns (fields.whitelist); consecutive
// records for the same table, operation and columns form a run written with multi-row statements of at most
// batch.size rows: INSERT, INSERT ... ON CONFLICT (pk) DO UPDATE (upsert; the last record of a key in a run
// wins, as it would one row at a time), UPDATE, or DELETE for a tombstone (delete.enabled). A missing table is
// created (auto.create) and missing columns added (auto.evolve) from the record schemas before the batch.

import type pg from 'pg';
import type { SinkRecord } from '../../api/records.js';
import { type Schema, Schemas } from '../../data/schema.js';
import { Struct } from '../../data/struct.js';
import { ConnectException } from '../../errors.js';
import { quoteIdent, quoteTable, splitTable } from './connection.js';
import type { SinkConfig } from './sink-config.js';
import { sqlType, toParam } from './types.js';

/** PostgreSQL's limit of bind parameters in one statement. */
const PARAMS_MAX = 65_535;

interface FieldDef {
  name: string;
  schema: Schema;
}

interface Row {
  table: string;
  op: 'upsert' | 'insert' | 'update' | 'delete';
  keyFields: FieldDef[];
  valueFields: FieldDef[];
  keyValues: unknown[];
  values: unknown[];
}

const KAFKA_PK_DEFAULTS = ['__connect_topic', '__connect_partition', '__connect_offset'];

export class SinkWriter {
  /** Known columns per table (lower-case names PostgreSQL folds unquoted names to are not assumed: exact names). */
  private readonly tables = new Map<string, Set<string>>();

  constructor(
    private readonly c: SinkConfig,
    private readonly connector: string,
  ) {}

  async write(client: pg.PoolClient, records: readonly SinkRecord[]): Promise<void> {
    const rows = records.map((r) => this.rowOf(r));
    for (const row of rows) await this.ensureTable(client, row);
    await client.query('BEGIN');
    try {
      let start = 0;
      while (start < rows.length) {
        let end = start + 1;
        while (end < rows.length && sameShape(rows[start]!, rows[end]!)) end++;
        await this.writeRun(client, rows.slice(start, end));
        start = end;
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    }
  }

  private rowOf(r: SinkRecord): Row {
    const table = this.c.tableNameFormat.replace(/\$\{topic\}/g, r.topic);
    const key = this.keyOf(r);
    if (r.value === null) {
      if (!this.c.deleteEnabled) throw this.structRequired(r);
      if (key.fields.length === 0)
        throw new ConnectException(`Deletes need a record key (record ${where(r)})`);
      return {
        table,
        op: 'delete',
        keyFields: key.fields,
        valueFields: [],
        keyValues: key.values,
        values: [],
      };
    }
    if (!(r.value instanceof Struct) || r.valueSchema === null) throw this.structRequired(r);
    const struct = r.value;
    const keyNames = new Set(key.fields.map((f) => f.name));
    let fields = struct.schema.fields();
    if (this.c.fieldsWhitelist.length > 0)
      fields = fields.filter((f) => this.c.fieldsWhitelist.includes(f.name));
    const valueFields = fields
      .filter((f) => !keyNames.has(f.name))
      .map((f) => ({ name: f.name, schema: f.schema }));
    const op =
      this.c.insertMode === 'upsert' ? 'upsert' : this.c.insertMode === 'update' ? 'update' : 'insert';
    return {
      table,
      op,
      keyFields: key.fields,
      valueFields,
      keyValues: key.values,
      values: valueFields.map((f) => struct.get(f.name)),
    };
  }

  private keyOf(r: SinkRecord): { fields: FieldDef[]; values: unknown[] } {
    switch (this.c.pkMode) {
      case 'none':
        return { fields: [], values: [] };
      case 'kafka': {
        const names = this.c.pkFields.length > 0 ? this.c.pkFields : KAFKA_PK_DEFAULTS;
        if (names.length !== 3) {
          throw new ConnectException(
            'PK mode for table is KAFKA so there should either be no field names defined for defaults __connect_topic, __connect_partition, __connect_offset to be applicable, or exactly 3',
          );
        }
        return {
          fields: [
            { name: names[0]!, schema: Schemas.STRING },
            { name: names[1]!, schema: Schemas.INT32 },
            { name: names[2]!, schema: Schemas.INT64 },
          ],
          values: [r.topic, r.kafkaPartition, r.kafkaOffset],
        };
      }
      case 'record_key': {
        if (r.key === null || r.keySchema === null) {
          throw new ConnectException(
            `PK mode for table is RECORD_KEY, but record key schema is missing (record ${where(r)})`,
          );
        }
        if (r.keySchema.type !== 'struct') {
          if (this.c.pkFields.length !== 1) {
            throw new ConnectException(
              'Need exactly one PK column defined since the key schema for records is a primitive type, defined columns are: ' +
                JSON.stringify(this.c.pkFields),
            );
          }
          return { fields: [{ name: this.c.pkFields[0]!, schema: r.keySchema }], values: [r.key] };
        }
        return this.structFields(r.key as Struct, this.c.pkFields, 'key');
      }
      case 'record_value': {
        if (!(r.value instanceof Struct)) throw this.structRequired(r);
        return this.structFields(r.value, this.c.pkFields, 'value');
      }
    }
  }

  private structFields(s: Struct, names: string[], what: string): { fields: FieldDef[]; values: unknown[] } {
    const chosen = names.length > 0 ? names : s.schema.fields().map((f) => f.name);
    const fields = chosen.map((n) => {
      const f = s.schema.field(n);
      if (f === undefined) throw new ConnectException(`PK field not found in record ${what} schema: ${n}`);
      return { name: n, schema: f.schema };
    });
    return { fields, values: chosen.map((n) => s.get(n)) };
  }

  private structRequired(r: SinkRecord): ConnectException {
    const kind =
      r.value === null
        ? 'null'
        : r.value instanceof Struct
          ? 'Struct'
          : Array.isArray(r.value)
            ? 'Array'
            : typeof r.value;
    return new ConnectException(
      `Sink connector '${this.connector}' is configured with 'delete.enabled=${this.c.deleteEnabled}' and 'pk.mode=${this.c.pkMode}' ` +
        `and therefore requires records with a non-null Struct value and non-null Struct schema, but found record at ${where(r)} ` +
        `with a ${kind} value and ${r.valueSchema === null ? 'null' : 'non-null'} value schema.`,
    );
  }

  /** Creates or evolves the row's table so that every column exists. */
  private async ensureTable(client: pg.PoolClient, row: Row): Promise<void> {
    let columns = this.tables.get(row.table);
    if (columns === undefined) {
      columns = await this.readColumns(client, row.table);
      if (columns.size === 0) {
        if (!this.c.autoCreate) {
          throw new ConnectException(`Table "${row.table}" is missing and auto-creation is disabled`);
        }
        await this.createTable(client, row);
        columns = await this.readColumns(client, row.table);
      }
      this.tables.set(row.table, columns);
    }
    const missing = [...row.keyFields, ...row.valueFields].filter((f) => !columns!.has(f.name));
    if (missing.length === 0) return;
    if (!this.c.autoEvolve) {
      throw new ConnectException(
        `Table "${row.table}" is missing fields (${missing.map((f) => f.name).join(', ')}) and auto-evolution is disabled`,
      );
    }
    for (const f of missing) {
      if (!f.schema.optional && !f.schema.hasDefault()) {
        throw new ConnectException(
          `Cannot ALTER TABLE "${row.table}" to add missing field ${f.name}, as the field is not optional and does not have a default value`,
        );
      }
      await client.query(
        `ALTER TABLE ${quoteTable(row.table)} ADD COLUMN IF NOT EXISTS ${columnDefinition(f)}`,
      );
      columns.add(f.name);
    }
  }

  private async readColumns(client: pg.PoolClient, table: string): Promise<Set<string>> {
    const { schema, table: name } = splitTable(table);
    const res = await client.query<{ column_name: string }>(
      'SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
      [schema, name],
    );
    return new Set(res.rows.map((r) => r.column_name));
  }

  private async createTable(client: pg.PoolClient, row: Row): Promise<void> {
    const cols = [
      ...row.keyFields.map((f) => ({ ...f, key: true })),
      ...row.valueFields.map((f) => ({ ...f, key: false })),
    ];
    const defs = cols.map((f) => columnDefinition(f, f.key));
    if (row.keyFields.length > 0)
      defs.push(`PRIMARY KEY(${row.keyFields.map((f) => quoteIdent(f.name)).join(',')})`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${quoteTable(row.table)} (\n${defs.join(',\n')})`);
  }

  private async writeRun(client: pg.PoolClient, rows: Row[]): Promise<void> {
    const first = rows[0]!;
    if (first.op === 'upsert') rows = lastPerKey(rows);
    const width = first.keyFields.length + first.valueFields.length;
    const perStatement = Math.max(
      1,
      Math.min(this.c.batchSize || rows.length, Math.floor(PARAMS_MAX / Math.max(1, width))),
    );
    if (first.op === 'update') {
      for (const r of rows)
        await client.query(updateSql(r), [
          ...r.values.map((v, i) => toParam(r.valueFields[i]!.schema, v)),
          ...keyParams(r),
        ]);
      return;
    }
    for (let i = 0; i < rows.length; i += perStatement) {
      const chunk = rows.slice(i, i + perStatement);
      if (first.op === 'delete') await deleteRows(client, chunk);
      else await insertRows(client, chunk, first.op === 'upsert');
    }
  }
}

function where(r: SinkRecord): string {
  return `(topic='${r.topic}',partition=${r.kafkaPartition},offset=${r.kafkaOffset},timestamp=${r.timestamp})`;
}

function sameShape(a: Row, b: Row): boolean {
  return (
    a.table === b.table &&
    a.op === b.op &&
    a.keyFields.length === b.keyFields.length &&
    a.valueFields.length === b.valueFields.length &&
    a.keyFields.every((f, i) => f.name === b.keyFields[i]!.name) &&
    a.valueFields.every((f, i) => f.name === b.valueFields[i]!.name)
  );
}

function keyParams(r: Row): unknown[] {
  return r.keyValues.map((v, i) => toParam(r.keyFields[i]!.schema, v));
}

/** Upserting the same key twice in one statement is an error in PostgreSQL; the later record wins anyway. */
function lastPerKey(rows: Row[]): Row[] {
  const byKey = new Map<string, Row>();
  for (const r of rows) {
    const k = JSON.stringify(keyParams(r), (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
    byKey.delete(k);
    byKey.set(k, r);
  }
  return [...byKey.values()];
}

function columnDefinition(f: FieldDef, key = false): string {
  const nullable = key || !f.schema.optional ? 'NOT NULL' : 'NULL';
  const dflt =
    f.schema.hasDefault() && f.schema.defaultValue !== null
      ? ` DEFAULT ${literal(toParam(f.schema, f.schema.defaultValue))}`
      : '';
  return `${quoteIdent(f.name)} ${sqlType(f.schema)}${dflt} ${nullable}`;
}

function literal(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Buffer.isBuffer(v)) return `'\\x${v.toString('hex')}'::bytea`;
  return `'${String(v).replace(/'/g, "''")}'`;
}

async function insertRows(client: pg.PoolClient, rows: Row[], upsert: boolean): Promise<void> {
  const first = rows[0]!;
  const cols = [...first.keyFields, ...first.valueFields];
  const params: unknown[] = [];
  const tuples = rows.map((r) => {
    const start = params.length;
    params.push(...keyParams(r), ...r.values.map((v, i) => toParam(r.valueFields[i]!.schema, v)));
    return `(${cols.map((_c, i) => `$${start + i + 1}`).join(',')})`;
  });
  let sql = `INSERT INTO ${quoteTable(first.table)} (${cols.map((c) => quoteIdent(c.name)).join(',')}) VALUES ${tuples.join(',')}`;
  if (upsert) {
    const keys = first.keyFields.map((f) => quoteIdent(f.name)).join(',');
    sql +=
      first.valueFields.length === 0
        ? ` ON CONFLICT (${keys}) DO NOTHING`
        : ` ON CONFLICT (${keys}) DO UPDATE SET ${first.valueFields.map((f) => `${quoteIdent(f.name)}=EXCLUDED.${quoteIdent(f.name)}`).join(',')}`;
  }
  await client.query(sql, params);
}

async function deleteRows(client: pg.PoolClient, rows: Row[]): Promise<void> {
  const first = rows[0]!;
  const keys = first.keyFields.map((f) => quoteIdent(f.name));
  const params = rows.flatMap((r) => keyParams(r));
  // Parameters go as text: each is cast to its column's type so that the tuple comparison is typed.
  const tuples = rows.map(
    (_r, n) =>
      `(${keys.map((_k, i) => `$${n * keys.length + i + 1}::${castOf(first.keyFields[i]!)}`).join(',')})`,
  );
  await client.query(
    `DELETE FROM ${quoteTable(first.table)} WHERE (${keys.join(',')}) IN (${tuples.join(',')})`,
    params,
  );
}

function castOf(f: FieldDef): string {
  return sqlType(f.schema).toLowerCase();
}

function updateSql(r: Row): string {
  const sets = r.valueFields.map((f, i) => `${quoteIdent(f.name)}=$${i + 1}`).join(',');
  const conds = r.keyFields
    .map((f, i) => `${quoteIdent(f.name)}=$${r.valueFields.length + i + 1}`)
    .join(' AND ');
  return `UPDATE ${quoteTable(r.table)} SET ${sets} WHERE ${conds}`;
}
