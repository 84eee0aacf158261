// `brook configs --entity-type users`: SCRAM credentials as kafka-configs manages them, through
// AlterUserScramCredentials and DescribeUserScramCredentials:
//
//   --alter --entity-name alice --add-config 'SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-secret]'
//   --alter --entity-name alice --delete-config SCRAM-SHA-512
//   --describe [--entity-name alice]

import type { Admin, ScramMechanismName } from '../client/admin.js';
import { ErrorCode } from '../protocol/errors.js';
import { type ParsedArgs, splitTopLevel, UsageError } from './args.js';
import { err, out } from './client-tool.js';

const MECHANISMS: readonly string[] = ['SCRAM-SHA-256', 'SCRAM-SHA-512'];

function mechanism(name: string): ScramMechanismName {
  if (!MECHANISMS.includes(name)) {
    throw new UsageError(`users take only SCRAM credentials (${MECHANISMS.join(', ')}), not '${name}'`);
  }
  return name as ScramMechanismName;
}

function parseAdd(text: string, user: string) {
  return splitTopLevel(text).map((item) => {
    const m = /^([^=]+)=\[(.*)\]$/.exec(item.trim());
    if (m === null)
      throw new UsageError(`bad --add-config entry '${item}', expected SCRAM-SHA-256=[password=...]`);
    const fields = new Map(
      (m[2] as string)
        .split(',')
        .map((kv) => [kv.slice(0, kv.indexOf('=')).trim(), kv.slice(kv.indexOf('=') + 1)]),
    );
    const password = fields.get('password');
    if (password === undefined || password === '') throw new UsageError(`${m[1]} needs password=...`);
    const iterations = fields.has('iterations') ? Number(fields.get('iterations')) : undefined;
    if (iterations !== undefined && !Number.isInteger(iterations))
      throw new UsageError('iterations must be an integer');
    return { user, mechanism: mechanism((m[1] as string).trim()), password, iterations };
  });
}

/** `afterQuotas`: described after the user's quotas, so a user without credentials is no error. */
export async function scramUsers(admin: Admin, args: ParsedArgs, afterQuotas = false): Promise<number> {
  const user = args.get('entity-name');
  if (args.has('describe')) {
    const results = await admin.describeUserScramCredentials(user === undefined ? undefined : [user]);
    for (const r of results) {
      if (r.error !== null && afterQuotas && r.error.code === ErrorCode.RESOURCE_NOT_FOUND) continue;
      if (r.error !== null) {
        err(`Error describing SCRAM credentials of user ${r.user}: ${r.error.message}`);
        return 1;
      }
      const configs = r.credentials.map((c) => `${c.mechanism}=iterations=${c.iterations}`).join(', ');
      out(`SCRAM credential configs for user-principal '${r.user}' are ${configs}`);
    }
    return 0;
  }
  if (user === undefined || user === '')
    throw new UsageError('--alter --entity-type users needs --entity-name');
  const changes = [
    ...parseAdd(args.get('add-config') ?? '', user),
    ...splitTopLevel(args.get('delete-config') ?? '')
      .filter((n) => n.trim() !== '')
      .map((n) => ({ user, mechanism: mechanism(n.trim()) })),
  ];
  if (changes.length === 0) throw new UsageError('--alter needs --add-config or --delete-config');
  const results = await admin.alterUserScramCredentials(changes);
  const failed = results.find((r) => r.error !== null);
  if (failed !== undefined) {
    err(
      `Error while executing config command with args '${process.argv.slice(2).join(' ')}'\n${failed.error!.message}`,
    );
    return 1;
  }
  out(`Completed updating config for user ${user}.`);
  return 0;
}
