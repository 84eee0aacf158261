// The PostgreSQL sink's configuration: the keys of the widely used JDBC sink connector, with its defaults.

import { ConfigDef, oneOf, type ParsedConfig, range } from '../../api/config-def.js';
import { connectionConfigKeys, parseConnectionConfig } from './connection.js';

export type InsertMode = 'insert' | 'upsert' | 'update';
export type PkMode = 'none' | 'kafka' | 'record_key' | 'record_value';

export function sinkConfigDef(): ConfigDef {
  const def = new ConfigDef();
  for (const key of connectionConfigKeys('Connection')) def.define(key);
  return def
    .define({
      name: 'insert.mode',
      type: 'STRING',
      defaultValue: 'insert',
      validator: oneOf(['insert', 'upsert', 'update'], true),
      importance: 'HIGH',
      documentation:
        'The insertion mode to use: insert, upsert (INSERT ... ON CONFLICT DO UPDATE) or update.',
      group: 'Writes',
    })
    .define({
      name: 'batch.size',
      type: 'INT',
      defaultValue: 3000,
      validator: range(0),
      importance: 'MEDIUM',
      documentation: 'How many records to write together in one statement, when possible.',
      group: 'Writes',
    })
    .define({
      name: 'delete.enabled',
      type: 'BOOLEAN',
      defaultValue: false,
      importance: 'MEDIUM',
      documentation: 'Whether to treat null record values as deletes. Requires pk.mode to be record_key.',
      group: 'Writes',
    })
    .define({
      name: 'table.name.format',
      type: 'STRING',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the JDBC sink's own placeholder, not a template.
      defaultValue: '${topic}',
      importance: 'MEDIUM',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the JDBC sink's own placeholder, not a template.
      documentation: 'A format string for the destination table name, which may contain ${topic}.',
      group: 'Data Mapping',
    })
    .define({
      name: 'pk.mode',
      type: 'STRING',
      defaultValue: 'none',
      validator: oneOf(['none', 'kafka', 'record_key', 'record_value'], true),
      importance: 'HIGH',
      documentation: 'The primary key mode: none, kafka, record_key or record_value.',
      group: 'Data Mapping',
    })
    .define({
      name: 'pk.fields',
      type: 'LIST',
      defaultValue: '',
      importance: 'MEDIUM',
      documentation: 'List of comma-separated primary key field names; its meaning depends on pk.mode.',
      group: 'Data Mapping',
    })
    .define({
      name: 'fields.whitelist',
      type: 'LIST',
      defaultValue: '',
      importance: 'MEDIUM',
      documentation: 'List of comma-separated record value field names; if empty, all fields are used.',
      group: 'Data Mapping',
    })
    .define({
      name: 'auto.create',
      type: 'BOOLEAN',
      defaultValue: false,
      importance: 'MEDIUM',
      documentation: 'Whether to create the destination table from the record schema when it is missing.',
      group: 'DDL Support',
    })
    .define({
      name: 'auto.evolve',
      type: 'BOOLEAN',
      defaultValue: false,
      importance: 'MEDIUM',
      documentation: 'Whether to add columns for fields the table is missing.',
      group: 'DDL Support',
    })
    .define({
      name: 'max.retries',
      type: 'INT',
      defaultValue: 10,
      validator: range(0),
      importance: 'MEDIUM',
      documentation: 'The maximum number of times to retry on errors before failing the task.',
      group: 'Retries',
    })
    .define({
      name: 'retry.backoff.ms',
      type: 'INT',
      defaultValue: 3000,
      validator: range(0),
      importance: 'MEDIUM',
      documentation: 'The time in milliseconds to wait following an error before a retry attempt is made.',
      group: 'Retries',
    });
}

export interface SinkConfig {
  url: string;
  user: string | null;
  password: string | null;
  poolSize: number;
  insertMode: InsertMode;
  batchSize: number;
  deleteEnabled: boolean;
  tableNameFormat: string;
  pkMode: PkMode;
  pkFields: string[];
  fieldsWhitelist: string[];
  autoCreate: boolean;
  autoEvolve: boolean;
  maxRetries: number;
  retryBackoffMs: number;
}

export function parseSinkConfig(props: Record<string, string>): SinkConfig {
  const c: ParsedConfig = sinkConfigDef().parse(props);
  return {
    ...parseConnectionConfig(c),
    insertMode: (c['insert.mode'] as string).toLowerCase() as InsertMode,
    batchSize: c['batch.size'] as number,
    deleteEnabled: c['delete.enabled'] as boolean,
    tableNameFormat: c['table.name.format'] as string,
    pkMode: (c['pk.mode'] as string).toLowerCase() as PkMode,
    pkFields: c['pk.fields'] as string[],
    fieldsWhitelist: c['fields.whitelist'] as string[],
    autoCreate: c['auto.create'] as boolean,
    autoEvolve: c['auto.evolve'] as boolean,
    maxRetries: c['max.retries'] as number,
    retryBackoffMs: c['retry.backoff.ms'] as number,
  };
}

/** Rules across keys, as the JDBC sink states them. */
export function sinkConfigErrors(props: Record<string, string>): { key: string; message: string }[] {
  const out: { key: string; message: string }[] = [];
  const pkMode = (props['pk.mode'] ?? 'none').trim().toLowerCase();
  if ((props['delete.enabled'] ?? 'false').trim().toLowerCase() === 'true' && pkMode !== 'record_key') {
    out.push({ key: 'delete.enabled', message: 'Deletes are only supported for pk.mode record_key' });
  }
  const mode = (props['insert.mode'] ?? 'insert').trim().toLowerCase();
  if ((mode === 'upsert' || mode === 'update') && pkMode === 'none') {
    out.push({
      key: 'pk.mode',
      message: `insert.mode ${mode} needs a primary key: set pk.mode to kafka, record_key or record_value`,
    });
  }
  return out;
}
