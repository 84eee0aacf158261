// The PostgreSQL source's configuration: the keys of the widely used JDBC source connector, with its defaults.

import { ConfigDef, oneOf, type ParsedConfig, range } from '../../api/config-def.js';
import { connectionConfigKeys, parseConnectionConfig } from './connection.js';

export type SourceMode = 'bulk' | 'incrementing' | 'timestamp' | 'timestamp+incrementing';

export function sourceConfigDef(): ConfigDef {
  const def = new ConfigDef();
  for (const key of connectionConfigKeys('Database')) def.define(key);
  return def
    .define({
      name: 'table.whitelist',
      type: 'LIST',
      defaultValue: '',
      importance: 'MEDIUM',
      documentation: 'List of tables to include in copying. If specified, table.blacklist may not be set.',
      group: 'Database',
    })
    .define({
      name: 'table.blacklist',
      type: 'LIST',
      defaultValue: '',
      importance: 'MEDIUM',
      documentation: 'List of tables to exclude from copying.',
      group: 'Database',
    })
    .define({
      name: 'schema.pattern',
      type: 'STRING',
      defaultValue: 'public',
      importance: 'MEDIUM',
      documentation: 'Schema whose tables are copied when no whitelist names them.',
      group: 'Database',
    })
    .define({
      name: 'mode',
      type: 'STRING',
      validator: oneOf(['bulk', 'incrementing', 'timestamp', 'timestamp+incrementing']),
      importance: 'HIGH',
      documentation:
        'The mode for updating a table each time it is polled: bulk, incrementing, timestamp, timestamp+incrementing.',
      group: 'Mode',
    })
    .define({
      name: 'incrementing.column.name',
      type: 'STRING',
      defaultValue: '',
      importance: 'MEDIUM',
      documentation: 'The name of the strictly incrementing column to use to detect new rows.',
      group: 'Mode',
    })
    .define({
      name: 'timestamp.column.name',
      type: 'LIST',
      defaultValue: '',
      importance: 'MEDIUM',
      documentation:
        'The name of the timestamp column used to detect new or modified rows (the first given).',
      group: 'Mode',
    })
    .define({
      name: 'validate.non.null',
      type: 'BOOLEAN',
      defaultValue: true,
      importance: 'LOW',
      documentation: 'Whether to check that the incrementing and timestamp columns are NOT NULL.',
      group: 'Mode',
    })
    .define({
      name: 'query',
      type: 'STRING',
      defaultValue: '',
      importance: 'MEDIUM',
      documentation:
        'If specified, the query to perform to select new or updated rows instead of whole tables.',
      group: 'Mode',
    })
    .define({
      name: 'numeric.mapping',
      type: 'STRING',
      defaultValue: 'none',
      validator: oneOf(['none', 'best_fit']),
      importance: 'LOW',
      documentation: 'Map NUMERIC values by precision and scale (best_fit) or always as Decimal (none).',
      group: 'Mode',
    })
    .define({
      name: 'poll.interval.ms',
      type: 'INT',
      defaultValue: 5000,
      validator: range(1),
      importance: 'HIGH',
      documentation: 'Frequency in ms to poll for new data in each table.',
      group: 'Connector',
    })
    .define({
      name: 'batch.max.rows',
      type: 'INT',
      defaultValue: 100,
      validator: range(1),
      importance: 'LOW',
      documentation: 'Maximum number of rows to include in a single batch when polling for new data.',
      group: 'Connector',
    })
    .define({
      name: 'table.poll.interval.ms',
      type: 'LONG',
      defaultValue: 60_000,
      validator: range(1),
      importance: 'LOW',
      documentation: 'Frequency in ms to poll for new or removed tables.',
      group: 'Connector',
    })
    .define({
      name: 'topic.prefix',
      type: 'STRING',
      importance: 'HIGH',
      documentation:
        'Prefix to prepend to table names to generate the name of the Kafka topic to publish data to, or the full topic name with a query.',
      group: 'Connector',
    })
    .define({
      name: 'timestamp.delay.interval.ms',
      type: 'LONG',
      defaultValue: 0,
      validator: range(0),
      importance: 'HIGH',
      documentation: 'How long to wait after a row with a certain timestamp appears before including it.',
      group: 'Connector',
    });
}

export interface SourceConfig {
  url: string;
  user: string | null;
  password: string | null;
  poolSize: number;
  whitelist: string[];
  blacklist: string[];
  schemaPattern: string;
  mode: SourceMode;
  incrementingColumn: string;
  timestampColumn: string;
  validateNonNull: boolean;
  query: string;
  numericMapping: 'none' | 'best_fit';
  pollIntervalMs: number;
  batchMaxRows: number;
  topicPrefix: string;
  timestampDelayMs: number;
}

export function parseSourceConfig(props: Record<string, string>): SourceConfig {
  const c: ParsedConfig = sourceConfigDef().parse(props);
  return {
    ...parseConnectionConfig(c),
    whitelist: c['table.whitelist'] as string[],
    blacklist: c['table.blacklist'] as string[],
    schemaPattern: c['schema.pattern'] as string,
    mode: c.mode as SourceMode,
    incrementingColumn: c['incrementing.column.name'] as string,
    timestampColumn: (c['timestamp.column.name'] as string[])[0] ?? '',
    validateNonNull: c['validate.non.null'] as boolean,
    query: c.query as string,
    numericMapping: c['numeric.mapping'] as 'none' | 'best_fit',
    pollIntervalMs: c['poll.interval.ms'] as number,
    batchMaxRows: c['batch.max.rows'] as number,
    topicPrefix: c['topic.prefix'] as string,
    timestampDelayMs: c['timestamp.delay.interval.ms'] as number,
  };
}

/** Rules across keys, as the JDBC source states them. */
export function sourceConfigErrors(props: Record<string, string>): { key: string; message: string }[] {
  const out: { key: string; message: string }[] = [];
  const mode = (props.mode ?? '').trim();
  const has = (k: string) => (props[k] ?? '').trim() !== '';
  if ((mode === 'incrementing' || mode === 'timestamp+incrementing') && !has('incrementing.column.name')) {
    out.push({ key: 'incrementing.column.name', message: `Mode ${mode} needs incrementing.column.name` });
  }
  if ((mode === 'timestamp' || mode === 'timestamp+incrementing') && !has('timestamp.column.name')) {
    out.push({ key: 'timestamp.column.name', message: `Mode ${mode} needs timestamp.column.name` });
  }
  if (has('table.whitelist') && has('table.blacklist')) {
    out.push({ key: 'table.whitelist', message: 'table.whitelist and table.blacklist are exclusive.' });
  }
  if (has('query') && (has('table.whitelist') || has('table.blacklist'))) {
    out.push({ key: 'query', message: 'Do not specify table filtering when using a query' });
  }
  return out;
}
