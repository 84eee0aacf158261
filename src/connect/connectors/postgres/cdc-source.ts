// PostgresCdcSourceConnector: change data capture from PostgreSQL's logical replication with the pgoutput
// plugin. One task. On first start it makes the publication (publication.name, for table.include.list or all
// tables) and the logical replication slot (slot.name) if they do not exist, then with snapshot.mode=initial
// copies every included table (records marked op=r), then streams the changes: inserts and updates as the
// new row, deletes as a tombstone, each keyed by the table's primary key (replica identity) as a struct, in
// commit order, with the headers __op (c, u, d, r), __lsn and __table.
//
// The changes are read through the SQL interface to logical decoding (pg_logical_slot_peek_binary_changes),
// which does not consume them: the slot is moved on (pg_replication_slot_advance) only to the end of the last
// transaction whose records' offsets the runtime has committed, so a restart, even after kill -9, resumes
// there and nothing is lost; records after it may be delivered again (at least once, harmless to an upserting
// sink). Offsets: partition {"slot": name}; offset {"lsn_commit", "lsn", "lsn_end", "txn_complete"} (LSNs as
// text) for changes, {"snapshot_completed"} during the snapshot. Known limits: the snapshot is not taken at the
// slot's exported snapshot (changes made while it runs may appear twice), each table is read in one query,
// and an unchanged TOASTed column of an update arrives as null.

import type pg from 'pg';
import { ConfigDef, nonEmptyString, type ParsedConfig, range } from '../../api/config-def.js';
import { SourceConnector, SourceTask, type TaskConfig } from '../../api/connector.js';
import { type ConnectHeader, type SourceOffset, SourceRecord } from '../../api/records.js';
import { Decimal } from '../../data/logical.js';
import { type Schema, SchemaBuilder, Schemas } from '../../data/schema.js';
import { Struct } from '../../data/struct.js';
import { ConnectException } from '../../errors.js';
import { InterruptibleSleep } from '../../runtime/interruptible-sleep.js';
import { BROOK_CONNECT_VERSION } from '../../version.js';
import {
  connectionConfigKeys,
  openPool,
  parseConnectionConfig,
  quoteIdent,
  quoteTable,
  splitTable,
} from './connection.js';
import { decodePgOutput, formatLsn, parseLsn, type Relation, type TupleValue } from './pgoutput.js';
import { columnOfOid, columnSchema, fromText } from './types.js';

const POLL_WAIT_MAX_MS = 1000;

function cdcConfigDef(): ConfigDef {
  // One connection: the slot is read by one session (the user needs REPLICATION or superuser).
  const def = new ConfigDef();
  for (const key of connectionConfigKeys('Connection', false)) def.define(key);
  return def
    .define({
      name: 'slot.name',
      type: 'STRING',
      defaultValue: 'brook',
      validator: nonEmptyString,
      importance: 'HIGH',
      documentation: 'The logical replication slot (made if missing).',
    })
    .define({
      name: 'publication.name',
      type: 'STRING',
      defaultValue: 'brook_publication',
      validator: nonEmptyString,
      importance: 'HIGH',
      documentation: 'The publication (made if missing).',
    })
    .define({
      name: 'table.include.list',
      type: 'LIST',
      defaultValue: '',
      importance: 'HIGH',
      documentation: 'Tables to capture (schema.table or table); empty for all tables.',
    })
    .define({
      name: 'topic.prefix',
      type: 'STRING',
      validator: nonEmptyString,
      importance: 'HIGH',
      documentation: 'Topics are <topic.prefix><table>.',
    })
    .define({
      name: 'snapshot.mode',
      type: 'STRING',
      defaultValue: 'initial',
      importance: 'MEDIUM',
      documentation: 'initial: copy the tables first; never: changes only.',
    })
    .define({
      name: 'poll.interval.ms',
      type: 'INT',
      defaultValue: 500,
      validator: range(1),
      importance: 'MEDIUM',
      documentation: 'How long to wait when there are no changes.',
    })
    .define({
      name: 'max.batch.size',
      type: 'INT',
      defaultValue: 2048,
      validator: range(1),
      importance: 'LOW',
      documentation: 'Changes decoded per read (whole transactions).',
    });
}

export class PostgresCdcSourceConnector extends SourceConnector {
  static readonly className = 'brook.connect.postgres.PostgresCdcSourceConnector';
  private props: Record<string, string> = {};

  version(): string {
    return BROOK_CONNECT_VERSION;
  }
  start(props: Record<string, string>): void {
    cdcConfigDef().parse(props);
    this.props = props;
  }
  taskClass() {
    return PostgresCdcSourceTask;
  }
  taskConfigs(): TaskConfig[] {
    return [{ ...this.props }];
  }
  stop(): void {}
  config() {
    return cdcConfigDef();
  }
}

interface TableState {
  relation: Relation;
  valueSchema: Schema;
  keySchema: Schema | null;
}

export class PostgresCdcSourceTask extends SourceTask {
  private c!: ParsedConfig;
  private pool: pg.Pool | null = null;
  private slot = '';
  private publication = '';
  private prefix = '';
  private snapshotPending: string[] | null = null;
  private snapshotStartLsn = '0/0';
  private readonly relations = new Map<number, TableState>();
  /** The last change handed out: skip it and what came before when a read returns them again. */
  private last: { commit: bigint; lsn: bigint } | null = null;
  private advancedTo = 0n;
  private readonly pause = new InterruptibleSleep();

  version(): string {
    return BROOK_CONNECT_VERSION;
  }

  async start(props: TaskConfig): Promise<void> {
    this.c = cdcConfigDef().parse(props);
    this.slot = this.c['slot.name'] as string;
    this.publication = this.c['publication.name'] as string;
    this.prefix = this.c['topic.prefix'] as string;
    this.pool = openPool(parseConnectionConfig(this.c, 1));
    const tables = this.c['table.include.list'] as string[];
    const client = await this.pool.connect();
    try {
      const pub = await client.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [this.publication]);
      if (pub.rows.length === 0) {
        const what = tables.length === 0 ? 'ALL TABLES' : `TABLE ${tables.map(quoteTable).join(', ')}`;
        await client.query(`CREATE PUBLICATION ${quoteIdent(this.publication)} FOR ${what}`);
      }
      const slot = await client.query<{ lsn: string }>(
        'SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots WHERE slot_name = $1',
        [this.slot],
      );
      let slotLsn: string;
      if (slot.rows.length === 0) {
        const made = await client.query<{ lsn: string }>(
          "SELECT lsn::text AS lsn FROM pg_create_logical_replication_slot($1, 'pgoutput')",
          [this.slot],
        );
        slotLsn = made.rows[0]!.lsn;
      } else slotLsn = slot.rows[0]!.lsn;
      this.advancedTo = parseLsn(slotLsn);
      const stored = this.context.offsetStorageReader().offset({ slot: this.slot });
      if (stored !== null && stored.snapshot_completed !== false && typeof stored.lsn_commit === 'string') {
        this.last = { commit: parseLsn(stored.lsn_commit), lsn: parseLsn(stored.lsn as string) };
      } else if (
        (this.c['snapshot.mode'] as string) === 'initial' &&
        (stored === null || stored.snapshot_completed === false)
      ) {
        this.snapshotPending = tables.length > 0 ? [...tables] : await this.allPublishedTables(client);
        this.snapshotStartLsn = slotLsn;
      }
    } finally {
      client.release();
    }
  }

  private async allPublishedTables(client: pg.PoolClient): Promise<string[]> {
    const res = await client.query<{ t: string }>(
      "SELECT schemaname || '.' || tablename AS t FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1",
      [this.publication],
    );
    return res.rows.map((r) => r.t);
  }

  async poll(): Promise<SourceRecord[] | null> {
    const client = await this.pool!.connect();
    let records: SourceRecord[];
    try {
      records =
        this.snapshotPending !== null ? await this.snapshotNext(client) : await this.readChanges(client);
    } finally {
      client.release();
    }
    if (records.length === 0)
      await this.pause.sleep(Math.min(this.c['poll.interval.ms'] as number, POLL_WAIT_MAX_MS));
    return records;
  }

  /** One table of the initial snapshot per poll; the last record of the last table completes the snapshot. */
  private async snapshotNext(client: pg.PoolClient): Promise<SourceRecord[]> {
    const table = this.snapshotPending!.shift()!;
    const { schema, table: name } = splitTable(table);
    const cols = await client.query<Record<string, string>>(
      `SELECT a.attname AS name, a.atttypid::int AS oid, a.atttypmod AS typmod, NOT a.attnotnull AS nullable,
              COALESCE(a.attnum = ANY(i.indkey), false) AS iskey
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
       WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
      [schema, name],
    );
    const relation: Relation = {
      id: -1,
      namespace: schema,
      name,
      columns: cols.rows.map((r) => ({
        name: r.name!,
        typeOid: Number(r.oid),
        typeModifier: Number(r.typmod),
        isKey: r.iskey === 't' || String(r.iskey) === 'true',
      })),
    };
    const state = this.tableState(relation);
    const rows = await client.query({ text: `SELECT * FROM ${quoteTable(table)}`, rowMode: 'array' });
    const done = this.snapshotPending!.length === 0;
    const out = (rows.rows as TupleValue[][]).map((row, i) => {
      const last = done && i === rows.rows.length - 1;
      const offset: SourceOffset = last
        ? {
            snapshot_completed: true,
            lsn_commit: this.snapshotStartLsn,
            lsn: this.snapshotStartLsn,
            txn_complete: true,
          }
        : { snapshot_completed: false };
      return this.record(
        state,
        'r',
        row.map((v) => (Buffer.isBuffer(v) ? `\\x${v.toString('hex')}` : v)),
        offset,
        this.snapshotStartLsn,
      );
    });
    if (done) {
      this.snapshotPending = null;
      this.last = { commit: parseLsn(this.snapshotStartLsn), lsn: parseLsn(this.snapshotStartLsn) };
    }
    return out;
  }

  /** Decodes the next whole transactions after the slot's position, skipping what was already handed out. */
  private async readChanges(client: pg.PoolClient): Promise<SourceRecord[]> {
    await this.advanceToCommitted(client);
    const res = await client.query<{ lsn: string; data: Buffer }>(
      `SELECT lsn::text AS lsn, data FROM pg_logical_slot_peek_binary_changes($1, NULL, $2, 'proto_version', '1', 'publication_names', $3)`,
      [this.slot, this.c['max.batch.size'], this.publication],
    );
    const out: SourceRecord[] = [];
    let txn: { commit: bigint; records: { record: () => SourceRecord; lsn: bigint }[] } | null = null;
    for (const row of res.rows) {
      const m = decodePgOutput(row.data);
      const lsn = parseLsn(row.lsn);
      switch (m.tag) {
        case 'begin':
          txn = { commit: m.finalLsn, records: [] };
          break;
        case 'relation':
          this.relations.set(m.relation.id, this.tableState(m.relation));
          break;
        case 'insert':
        case 'update':
        case 'delete': {
          if (txn === null) throw new ConnectException('pgoutput: a change outside a transaction');
          const state = this.relations.get(m.relationId);
          if (state === undefined)
            throw new ConnectException(`pgoutput: change for unknown relation ${m.relationId}`);
          const t = txn;
          if (
            this.last !== null &&
            (t.commit < this.last.commit || (t.commit === this.last.commit && lsn <= this.last.lsn))
          )
            break;
          const op = m.tag === 'insert' ? 'c' : m.tag === 'update' ? 'u' : 'd';
          const tuple = m.tag === 'delete' ? m.oldTuple : m.newTuple;
          t.records.push({ lsn, record: () => this.record(state, op, tuple, {}, formatLsn(lsn)) });
          break;
        }
        case 'commit': {
          if (txn === null) break;
          const t = txn;
          t.records.forEach((entry, i) => {
            const r = entry.record();
            const offset: SourceOffset = {
              lsn_commit: formatLsn(t.commit),
              lsn: formatLsn(entry.lsn),
              lsn_end: formatLsn(m.endLsn),
              txn_complete: i === t.records.length - 1,
            };
            out.push(
              new SourceRecord({
                ...r,
                sourcePartition: r.sourcePartition,
                sourceOffset: offset,
                topic: r.topic,
              }),
            );
            this.last = { commit: t.commit, lsn: entry.lsn };
          });
          txn = null;
          break;
        }
        default:
          break;
      }
    }
    return out;
  }

  /** Moves the slot to the end of the last transaction whose records' offsets are committed. */
  private async advanceToCommitted(client: pg.PoolClient): Promise<void> {
    const committed = this.context.offsetStorageReader().offset({ slot: this.slot });
    if (committed === null || committed.txn_complete !== true || typeof committed.lsn_end !== 'string')
      return;
    const end = parseLsn(committed.lsn_end);
    if (end <= this.advancedTo) return;
    await client.query('SELECT pg_replication_slot_advance($1, $2::pg_lsn)', [this.slot, formatLsn(end)]);
    this.advancedTo = end;
  }

  private tableState(relation: Relation): TableState {
    const b = SchemaBuilder.struct().name(`${relation.namespace}.${relation.name}`);
    const k = SchemaBuilder.struct().name(`${relation.namespace}.${relation.name}.Key`);
    let keys = 0;
    for (const col of relation.columns) {
      const s = columnSchema(columnOfOid(col.name, col.typeOid, col.typeModifier, !col.isKey), 'none');
      b.field(col.name, s);
      if (col.isKey) {
        k.field(col.name, s);
        keys++;
      }
    }
    return { relation, valueSchema: b.build(), keySchema: keys > 0 ? k.build() : null };
  }

  private record(
    state: TableState,
    op: 'c' | 'u' | 'd' | 'r',
    tuple: TupleValue[],
    offset: SourceOffset,
    lsn: string,
  ): SourceRecord {
    const cols = state.relation.columns;
    const columnValue = (name: string, schema: Schema) => {
      const raw = tuple[cols.findIndex((c) => c.name === name)];
      if (raw === null || raw === undefined) return null;
      if (schema.type === 'bytes' && schema.name !== Decimal.LOGICAL_NAME)
        return Buffer.from(raw.startsWith('\\x') ? raw.slice(2) : raw, 'hex');
      return fromText(schema, raw);
    };
    let key: Struct | null = null;
    if (state.keySchema !== null) {
      key = new Struct(state.keySchema);
      for (const f of state.keySchema.fields()) key.put(f.name, columnValue(f.name, f.schema));
    }
    let value: Struct | null = null;
    if (op !== 'd') {
      value = new Struct(state.valueSchema);
      for (const f of state.valueSchema.fields()) value.put(f.name, columnValue(f.name, f.schema));
    }
    const headers: ConnectHeader[] = [
      { key: '__op', schema: Schemas.STRING, value: op },
      { key: '__lsn', schema: Schemas.STRING, value: lsn },
      { key: '__table', schema: Schemas.STRING, value: `${state.relation.namespace}.${state.relation.name}` },
    ];
    return new SourceRecord({
      sourcePartition: { slot: this.slot },
      sourceOffset: offset,
      topic: `${this.prefix}${state.relation.name}`,
      keySchema: state.keySchema,
      key,
      valueSchema: op === 'd' ? null : state.valueSchema,
      value,
      headers,
    });
  }

  async stop(): Promise<void> {
    this.pause.stop();
    await this.pool?.end();
    this.pool = null;
  }
}
