// `brook delegation-tokens`: kafka-delegation-tokens.sh's flags and output. Tokens may only be managed over an
// authenticated connection, so --command-config (security.protocol, sasl.* keys) is required, as in Kafka.
//
//   --create --max-life-time-period -1 [--renewer-principal User:bob]... [--owner-principal User:alice]
//   --renew --hmac <base64> --renew-time-period -1
//   --expire --hmac <base64> --expiry-time-period -1
//   --describe [--owner-principal User:alice]...

import { Admin } from '../client/admin.js';
import {
  createDelegationToken,
  type DelegationToken,
  describeDelegationTokens,
  expireDelegationToken,
  renewDelegationToken,
} from '../client/delegation-tokens.js';
import { type ParsedArgs, UsageError } from './args.js';
import { clientOptions, newClient, parseNumeric, runTool, type Tool } from './client-tool.js';

const tool: Tool = {
  name: 'delegation-tokens',
  summary: 'Create, renew, expire or describe delegation tokens (kafka-delegation-tokens).',
  specs: {
    create: {
      help: 'Create a new delegation token. Use --renewer-principal option to pass renewer principals.',
    },
    renew: { help: 'Renew delegation token. Use --renew-time-period option to set renew time period.' },
    expire: { help: 'Expire delegation token. Use --expiry-time-period option to expire the token.' },
    describe: {
      help: 'Describe delegation tokens for the given principals (--owner-principal); without one, the tokens the user owns or may describe.',
    },
    'owner-principal': {
      value: true,
      repeat: true,
      help: 'owner is a Kafka principal. They should be in principalType:name format.',
    },
    'renewer-principal': {
      value: true,
      repeat: true,
      help: 'renewer is a Kafka principal. They should be in principalType:name format.',
    },
    'max-life-time-period': {
      value: true,
      help: 'Max life period for the token in milliseconds; -1: the broker default (delegation.token.max.lifetime.ms).',
    },
    'renew-time-period': {
      value: true,
      help: 'Renew time period in milliseconds; -1: the broker default (delegation.token.expiry.time.ms).',
    },
    'expiry-time-period': {
      value: true,
      help: 'Expiry time period in milliseconds; -1: the token is invalidated immediately.',
    },
    hmac: { value: true, help: 'HMAC of the delegation token' },
  },
  run,
};

export function runDelegationTokens(args: string[]): Promise<number> {
  return runTool(tool, args);
}

/** Kafka's checkArgs: the options each action needs and those it must not have. */
const REQUIRED: Record<string, string[]> = {
  create: ['max-life-time-period'],
  renew: ['hmac', 'renew-time-period'],
  expire: ['hmac', 'expiry-time-period'],
  describe: [],
};
const INVALID: Record<string, string[]> = {
  create: ['hmac', 'renew-time-period', 'expiry-time-period'],
  renew: ['renewer-principal', 'max-life-time-period', 'expiry-time-period', 'owner-principal'],
  expire: ['renew', 'max-life-time-period', 'renew-time-period', 'owner-principal'],
  describe: ['renew-time-period', 'max-life-time-period', 'hmac', 'expiry-time-period'],
};

function period(args: ParsedArgs, name: string): number {
  return parseNumeric(
    args.required(name),
    { type: 'LONG', min: Number.MIN_SAFE_INTEGER },
    `option --${name}`,
  );
}

function principals(args: ParsedArgs, name: string): string[] {
  return args.all(name).map((p) => {
    const text = p.trim();
    if (!/^[^:]+:.+$/.test(text))
      throw new UsageError(`principal '${text}' is not of the form principalType:name`);
    return text;
  });
}

function hmacOf(args: ParsedArgs): Buffer {
  const text = args.required('hmac');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text))
    throw new UsageError('--hmac must be the base64 HMAC of the token');
  return Buffer.from(text, 'base64');
}

/** Java's SimpleDateFormat("yyyy-MM-dd'T'HH:mm") in the local time zone, as Kafka's tool prints dates. */
export function tokenDate(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}`;
}

/** Java's %-Ns: left-aligned, padded, never cut. */
const pad = (text: string, width: number) => text.padEnd(width);

function tokenLine(cells: string[]): string {
  const widths = [15, 30, 15, 15, 25, 15, 15, 15];
  return cells.map((c, i) => pad(c, widths[i]!)).join(' ');
}

/** Kafka's printToken: a blank line, the header, and each token after a blank line. */
function printTokens(tokens: DelegationToken[]): string {
  let text = `\n${tokenLine(['TOKENID', 'HMAC', 'OWNER', 'REQUESTER', 'RENEWERS', 'ISSUEDATE', 'EXPIRYDATE', 'MAXDATE'])}\n`;
  for (const t of tokens) {
    text += `\n${tokenLine([
      t.tokenId,
      t.hmac.toString('base64'),
      t.owner,
      t.tokenRequester,
      `[${t.renewers.join(', ')}]`,
      tokenDate(t.issueTimestampMs),
      tokenDate(t.expiryTimestampMs),
      tokenDate(t.maxTimestampMs),
    ])}\n`;
  }
  return text;
}

async function run(args: ParsedArgs): Promise<number> {
  const actions = ['create', 'renew', 'expire', 'describe'].filter((a) => args.has(a));
  if (actions.length !== 1) {
    throw new UsageError(
      'Command must include exactly one action: --create, --renew, --expire or --describe',
    );
  }
  const action = actions[0]!;
  args.required('bootstrap-server');
  args.required('command-config');
  for (const name of REQUIRED[action]!) args.required(name);
  for (const name of INVALID[action]!) {
    if (args.has(name)) throw new UsageError(`Option "[${action}]" can't be used with option "[${name}]"`);
  }
  const admin = newClient(() => new Admin(clientOptions(args)));
  const write = (text: string) => process.stdout.write(text);
  try {
    if (action === 'create') {
      const renewers = principals(args, 'renewer-principal');
      const maxLifetimeMs = period(args, 'max-life-time-period');
      const owner = principals(args, 'owner-principal')[0];
      write(
        `Calling create token operation with renewers :[${renewers.join(', ')}] , max-life-time-period :${maxLifetimeMs}\n`,
      );
      const token = await createDelegationToken(admin, {
        renewers,
        maxLifetimeMs,
        ...(owner === undefined ? {} : { owner }),
      });
      write(`Created delegation token with tokenId : ${token.tokenId}\n`);
      write(printTokens([token]));
    } else if (action === 'renew') {
      const hmac = hmacOf(args);
      const renewPeriodMs = period(args, 'renew-time-period');
      write(
        `Calling renew token operation with hmac :${args.get('hmac')} , renew-time-period :${renewPeriodMs}\n`,
      );
      const expiry = await renewDelegationToken(admin, hmac, renewPeriodMs);
      write(`Completed renew operation. New expiry date : ${tokenDate(expiry)}\n`);
    } else if (action === 'expire') {
      const hmac = hmacOf(args);
      const expiryPeriodMs = period(args, 'expiry-time-period');
      write(
        `Calling expire token operation with hmac :${args.get('hmac')} , expire-time-period :${expiryPeriodMs}\n`,
      );
      const expiry = await expireDelegationToken(admin, hmac, expiryPeriodMs);
      write(`Completed expire operation. New expiry date : ${tokenDate(expiry)}\n`);
    } else {
      const owners = principals(args, 'owner-principal');
      write(
        owners.length === 0
          ? 'Calling describe token operation for current user.\n'
          : `Calling describe token operation for owners: [${owners.join(', ')}]\n`,
      );
      const tokens = await describeDelegationTokens(admin, owners);
      write(`Total number of tokens : ${tokens.length}`);
      write(printTokens(tokens));
    }
    return 0;
  } finally {
    await admin.close();
  }
}
