// `brook configs --entity-type users|clients`: client quotas as kafka-configs manages them with
// --bootstrap-server, through AlterClientQuotas and DescribeClientQuotas:
//
//   --alter --entity-type users --entity-name alice --add-config producer_byte_rate=1048576
//   --alter --entity-type users --entity-name alice --entity-type clients --entity-name app --add-config ...
//   --alter --entity-type clients --entity-default --delete-config consumer_byte_rate
//   --describe --entity-type users [--entity-name alice] [--entity-type clients ...]
//
// The shortcuts --user, --client, --user-defaults and --client-defaults name entities as well. Entity names pair
// with entity types in the order given (an --entity-default stands for the default of its type), as in Kafka.
// SCRAM credentials of users (src/cli/scram-users.ts) go through the same command.

import type { Admin, ClientQuotaEntity, ClientQuotaFilterComponent } from '../client/admin.js';
import { type ParsedArgs, splitTopLevel, UsageError } from './args.js';
import { err, out } from './client-tool.js';
import { scramUsers } from './scram-users.js';

const QUOTA_KEYS: readonly string[] = [
  'producer_byte_rate',
  'consumer_byte_rate',
  'request_percentage',
  'controller_mutation_rate',
  'connection_creation_rate',
];
const SCRAM_KEYS: readonly string[] = ['SCRAM-SHA-256', 'SCRAM-SHA-512'];

/** Entity types and names in command-line order ('' for a default), read from the raw arguments. */
export interface QuotaEntityArgs {
  readonly types: string[];
  readonly names: string[];
}

const SHORTCUTS: Readonly<Record<string, { type: string; named: boolean }>> = {
  '--user': { type: 'users', named: true },
  '--client': { type: 'clients', named: true },
  '--user-defaults': { type: 'users', named: false },
  '--client-defaults': { type: 'clients', named: false },
};

export function quotaEntityArgs(argv: readonly string[]): QuotaEntityArgs {
  const types: string[] = [];
  const names: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = splitFlag(argv[i]!);
    const value = (): string => inline ?? argv[++i] ?? '';
    const shortcut = SHORTCUTS[flag];
    if (flag === '--entity-type') types.push(value());
    else if (flag === '--entity-name') names.push(value());
    else if (flag === '--entity-default') names.push('');
    else if (shortcut !== undefined) {
      types.push(shortcut.type);
      names.push(shortcut.named ? value() : '');
    }
  }
  return { types, names };
}

function splitFlag(arg: string): [string, string | undefined] {
  const eq = arg.indexOf('=');
  return eq < 0 ? [arg, undefined] : [arg.slice(0, eq), arg.slice(eq + 1)];
}

export function isQuotaEntityType(type: string | undefined): boolean {
  return type === 'users' || type === 'clients' || type === 'ips';
}

function components(e: QuotaEntityArgs): ClientQuotaFilterComponent[] {
  if (e.names.length > e.types.length) throw new UsageError('More entity names specified than entity types');
  return e.types.map((type, i) => {
    const entityType =
      type === 'users'
        ? ('user' as const)
        : type === 'clients'
          ? ('client-id' as const)
          : type === 'ips'
            ? ('ip' as const)
            : null;
    if (entityType === null) throw new UsageError(`Unexpected entity type ${type}`);
    const name = e.names[i];
    return { entityType, match: name === undefined ? 'any' : { name: name === '' ? null : name } };
  });
}

/** Java's Double.toString, which kafka-configs prints quota values with (1048576.0, 1.0E7). */
export function javaDouble(v: number): string {
  if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : v < 0 ? '-Infinity' : 'NaN';
  const abs = Math.abs(v);
  if (abs === 0 || (abs >= 1e-3 && abs < 1e7)) {
    const s = String(v);
    return s.includes('.') ? s : `${s}.0`;
  }
  const [mantissa, exponent] = v.toExponential().split('e') as [string, string];
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}

function describeEntity(entity: ClientQuotaEntity): string {
  const parts: string[] = [];
  if (entity.user !== undefined)
    parts.push(entity.user === null ? 'the default user-principal' : `user-principal '${entity.user}'`);
  if (entity.clientId !== undefined)
    parts.push(entity.clientId === null ? 'the default client-id' : `client-id '${entity.clientId}'`);
  if (entity.ip !== undefined) parts.push(entity.ip === null ? 'the default ip' : `ip '${entity.ip}'`);
  return parts.join(', ');
}

export async function clientQuotas(admin: Admin, args: ParsedArgs, e: QuotaEntityArgs): Promise<number> {
  if (args.has('describe')) {
    const found = await admin.describeClientQuotas(components(e), { strict: true });
    for (const f of found) {
      const values = Object.entries(f.values)
        .map(([k, v]) => `${k}=${javaDouble(v)}`)
        .join(', ');
      out(`Quota configs for ${describeEntity(f.entity)} are ${values}`);
    }
    // Kafka lists SCRAM credentials too, unless clients or a default are described.
    if (!e.types.includes('clients') && !e.types.includes('ips') && !e.names.includes(''))
      return scramUsers(admin, args, true);
    return 0;
  }
  const adds = new Map<string, string>();
  for (const item of splitTopLevel(args.get('add-config') ?? '')) {
    const i = item.indexOf('=');
    if (i <= 0) throw new UsageError(`bad --add-config entry '${item}', expected key=value`);
    adds.set(item.slice(0, i).trim(), item.slice(i + 1));
  }
  const deletes = splitTopLevel(args.get('delete-config') ?? '')
    .map((k) => k.trim())
    .filter((k) => k !== '');
  if (adds.size === 0 && deletes.length === 0)
    throw new UsageError('--alter needs --add-config or --delete-config');
  const keys = [...adds.keys(), ...deletes];
  const scram = keys.filter((k) => SCRAM_KEYS.includes(k));
  const unknown = keys.filter((k) => !SCRAM_KEYS.includes(k) && !QUOTA_KEYS.includes(k));
  const forClients = e.types[0] === 'clients' || e.types[0] === 'ips' || e.types.length === 2;
  if (unknown.length > 0 || (forClients && scram.length > 0)) {
    const what = forClients ? 'Only quota configs' : 'Only quota and SCRAM credential configs';
    throw new UsageError(
      `${what} can be altered for '${forClients ? 'clients' : 'users'}' using --bootstrap-server. Unexpected config names: ${[...unknown, ...(forClients ? scram : [])].join(',')}`,
    );
  }
  if (scram.length > 0) {
    if (scram.length !== keys.length)
      throw new UsageError(
        "Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server.",
      );
    if (e.names.includes(''))
      throw new UsageError(
        'The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using --bootstrap-server.',
      );
    return scramUsers(admin, args);
  }
  if (e.types.length !== e.names.length)
    throw new UsageError('Exactly one entity name must be specified for every entity type');
  const entity: ClientQuotaEntity = {};
  e.types.forEach((type, i) => {
    const name = e.names[i] === '' ? null : e.names[i]!;
    if (type === 'users') entity.user = name;
    else if (type === 'ips') entity.ip = name;
    else entity.clientId = name;
  });
  // Kafka's tool refuses to delete a key the entity does not have.
  const current = await admin.describeClientQuotas(components(e), { strict: true });
  const has = current[0]?.values ?? {};
  const missing = deletes.filter((k) => has[k] === undefined);
  if (missing.length > 0) {
    err(`Error while executing config command with args '${process.argv.slice(2).join(' ')}'`);
    err(
      `org.apache.kafka.common.errors.InvalidConfigurationException: Invalid config(s): ${missing.join(',')}`,
    );
    return 1;
  }
  const ops = [
    ...[...adds].map(([key, text]) => {
      const value = Number(text);
      if (text.trim() === '' || !Number.isFinite(value))
        throw new UsageError(`Cannot parse quota configuration value for ${key}: ${text}`);
      return { key, value };
    }),
    ...deletes.map((key) => ({ key, value: null })),
  ];
  const [result] = await admin.alterClientQuotas([{ entity, ops }]);
  if (result?.error != null) {
    err(`Error while executing config command with args '${process.argv.slice(2).join(' ')}'`);
    err(result.error.message);
    return 1;
  }
  const head = e.types[0]!;
  const name = e.names[0]!;
  out(
    name === ''
      ? `Completed updating default config for ${head} in the cluster.`
      : `Completed updating config for ${head.slice(0, -1)} ${name}.`,
  );
  return 0;
}
