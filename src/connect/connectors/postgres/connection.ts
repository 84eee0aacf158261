// Connections to PostgreSQL for the database connectors: connection.url in the JDBC form the JDBC connectors
// take (jdbc:postgresql://host:port/db?user=..&password=..) or as a postgres:// URL, connection.user and
// connection.password, a pg Pool per task (connection.pool.size, default 2). Every value comes back as
// PostgreSQL's text (no type parsing by pg, bytea excepted), so that numeric, int8 and timestamps are converted
// exactly by the connectors; sessions run in UTC so timestamptz text is unambiguous.

import pg from 'pg';
import { type ConfigKeyInput, type ParsedConfig, range } from '../../api/config-def.js';
import { ConfigException } from '../../errors.js';

export interface ConnectionConfig {
  url: string;
  user: string | null;
  password: string | null;
  poolSize: number;
}

/**
 * The connection keys every PostgreSQL connector takes, in the JDBC connectors' names: connection.url (required),
 * connection.user, connection.password and, for connectors that pool, connection.pool.size (Brook's).
 */
export function connectionConfigKeys(group: string, pooled = true): ConfigKeyInput[] {
  const keys: ConfigKeyInput[] = [
    {
      name: 'connection.url',
      type: 'STRING',
      importance: 'HIGH',
      documentation: 'JDBC connection URL, e.g. jdbc:postgresql://localhost:5432/db (or a postgres:// URL)',
      group,
    },
    {
      name: 'connection.user',
      type: 'STRING',
      defaultValue: null,
      importance: 'HIGH',
      documentation: 'JDBC connection user.',
      group,
    },
    {
      name: 'connection.password',
      type: 'PASSWORD',
      defaultValue: null,
      importance: 'HIGH',
      documentation: 'JDBC connection password.',
      group,
    },
  ];
  if (pooled) {
    keys.push({
      name: 'connection.pool.size',
      type: 'INT',
      defaultValue: 2,
      validator: range(1, 100),
      importance: 'LOW',
      documentation: 'Connections each task keeps in its pool.',
      group,
    });
  }
  return keys;
}

/** The connection keys of a parsed config; a connector without connection.pool.size gets `poolSize`. */
export function parseConnectionConfig(c: ParsedConfig, poolSize = 1): ConnectionConfig {
  return {
    url: c['connection.url'] as string,
    user: c['connection.user'] as string | null,
    password: (c['connection.password'] as { value: string } | null)?.value ?? null,
    poolSize: (c['connection.pool.size'] as number | undefined) ?? poolSize,
  };
}

const BYTEA_OID = 17;

/** pg's text parsers turned off: every column as its text, bytea as a Buffer. */
const rawTypes = {
  getTypeParser(oid: number) {
    if (oid === BYTEA_OID)
      return (text: string) => Buffer.from(text.startsWith('\\x') ? text.slice(2) : text, 'hex');
    return (text: string) => text;
  },
};

export function poolConfig(c: ConnectionConfig): pg.PoolConfig {
  const parsed = parseConnectionUrl(c.url);
  return {
    host: parsed.host,
    port: parsed.port,
    database: parsed.database,
    user: c.user ?? parsed.user,
    password: c.password ?? parsed.password,
    max: c.poolSize,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    options: '-c TimeZone=UTC',
    types: rawTypes as pg.CustomTypesConfig,
  };
}

export function openPool(c: ConnectionConfig): pg.Pool {
  const pool = new pg.Pool(poolConfig(c));
  // An idle client that loses its server emits on the pool; the next query reports it, so only swallow here.
  pool.on('error', () => {});
  return pool;
}

export interface ParsedUrl {
  host: string;
  port: number;
  database: string;
  user?: string;
  password?: string;
}

export function parseConnectionUrl(url: string): ParsedUrl {
  const trimmed = url.trim();
  const m = /^(?:jdbc:)?(postgresql|postgres):\/\/(.*)$/.exec(trimmed);
  if (m === null) {
    throw ConfigException.invalid(
      'connection.url',
      url,
      'expected jdbc:postgresql://host:port/database or postgres://...',
    );
  }
  let u: URL;
  try {
    u = new URL(`postgres://${m[2]}`);
  } catch {
    throw ConfigException.invalid('connection.url', url, 'not a valid URL');
  }
  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || 'postgres';
  const user = u.username !== '' ? decodeURIComponent(u.username) : (u.searchParams.get('user') ?? undefined);
  const password =
    u.password !== '' ? decodeURIComponent(u.password) : (u.searchParams.get('password') ?? undefined);
  return {
    host: u.hostname || 'localhost',
    port: u.port === '' ? 5432 : Number(u.port),
    database,
    user,
    password,
  };
}

/** A double-quoted identifier (quote.sql.identifiers=always), with embedded quotes doubled. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** "schema"."table" from a table name that may carry a schema ("public.orders"). */
export function quoteTable(name: string): string {
  const dot = name.indexOf('.');
  if (dot < 0) return quoteIdent(name);
  return `${quoteIdent(name.slice(0, dot))}.${quoteIdent(name.slice(dot + 1))}`;
}

export function splitTable(name: string): { schema: string; table: string } {
  const dot = name.indexOf('.');
  return dot < 0
    ? { schema: 'public', table: name }
    : { schema: name.slice(0, dot), table: name.slice(dot + 1) };
}
