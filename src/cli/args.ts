// Argument parsing for the client tools, in the style of Kafka's scripts: `--name value`, `--name=value`,
// boolean `--flag`, and options that may repeat (`--property k=v --property k2=v2`). Each tool declares its
// options; anything undeclared is an error with the tool's usage, exit code 1, as Kafka's joptsimple does.

import { readFileSync } from 'node:fs';

export interface OptionSpec {
  /** Takes a value (otherwise a flag). */
  value?: boolean;
  /** May repeat; values collect into a list. */
  repeat?: boolean;
  /**
   * Takes one or more values after one flag, up to the next `--option` (argparse's nargs="+", as Kafka's
   * perf tools declare --producer-props): `--producer-props acks=1 linger.ms=5`. Implies repeat.
   */
  multi?: boolean;
  help: string;
}

export type Specs = Record<string, OptionSpec>;

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export class ParsedArgs {
  constructor(
    private readonly values: Map<string, string[]>,
    private readonly flags: Set<string>,
  ) {}

  has(name: string): boolean {
    return this.flags.has(name) || this.values.has(name);
  }

  get(name: string): string | undefined {
    const v = this.values.get(name);
    return v === undefined ? undefined : v[v.length - 1];
  }

  all(name: string): string[] {
    return this.values.get(name) ?? [];
  }

  required(name: string): string {
    const v = this.get(name);
    if (v === undefined) throw new UsageError(`Missing required argument "[${name}]"`);
    return v;
  }

  int(name: string, fallback?: number): number | undefined {
    const v = this.get(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n)) throw new UsageError(`--${name} needs an integer, got '${v}'`);
    return n;
  }

  /** k=v pairs from a repeatable option, each value possibly holding several pairs separated by commas. */
  pairs(name: string, splitCommas = false): Record<string, string> {
    const out: Record<string, string> = {};
    for (const raw of this.all(name)) {
      for (const item of splitCommas ? splitTopLevel(raw) : [raw]) {
        const i = item.indexOf('=');
        if (i <= 0) throw new UsageError(`--${name} expects key=value, got '${item}'`);
        out[item.slice(0, i).trim()] = item.slice(i + 1);
      }
    }
    return out;
  }
}

/** Splits on commas outside square brackets (Kafka's `k=[a,b],k2=c` config syntax). */
export function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '[') depth++;
    else if (s[i] === ']') depth--;
    else if (s[i] === ',' && depth === 0) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  if (start < s.length) out.push(s.slice(start));
  return out.filter((x) => x.length > 0);
}

export function parseArgs(args: string[], specs: Specs): ParsedArgs {
  const values = new Map<string, string[]>();
  const flags = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument '${arg}'`);
    let name = arg.slice(2);
    let inline: string | undefined;
    const eq = name.indexOf('=');
    if (eq >= 0) {
      inline = name.slice(eq + 1);
      name = name.slice(0, eq);
    }
    const spec = specs[name];
    if (spec === undefined) throw new UsageError(`${arg} is not a recognized option`);
    if (!spec.value) {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`);
      flags.add(name);
      continue;
    }
    const value = inline ?? args[++i];
    if (value === undefined) throw new UsageError(`Option ${arg} requires an argument`);
    const list = values.get(name) ?? [];
    if (!spec.repeat && !spec.multi) list.length = 0;
    list.push(value);
    if (spec.multi) {
      while (i + 1 < args.length && !args[i + 1]!.startsWith('--')) list.push(args[++i]!);
    }
    values.set(name, list);
  }
  return new ParsedArgs(values, flags);
}

export function usage(command: string, summary: string, specs: Specs): string {
  const lines = [
    `usage: brook ${command} [options]`,
    '',
    summary,
    '',
    'Option                                   Description',
    '------                                   -----------',
  ];
  for (const [name, spec] of Object.entries(specs)) {
    const left = `--${name}${spec.multi ? ' <value> [<value> ...]' : spec.value ? ' <value>' : ''}`;
    lines.push(`${left.padEnd(40)} ${spec.help}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Reads a Java properties file (key=value or key: value lines, # and ! comments). */
export function readProperties(path: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of readFileSync(path, 'utf8').split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const m = /^([^=:\s]+)\s*[=:]\s*(.*)$/.exec(line);
    if (m !== null) out[m[1]!] = m[2]!;
  }
  return out;
}

/** Options every client tool takes. */
export const COMMON_SPECS: Specs = {
  'bootstrap-server': { value: true, help: 'REQUIRED: the server(s) to connect to, host:port[,host:port]' },
  'command-config': {
    value: true,
    help: 'Property file with client configs (client.id, request.timeout.ms, ...)',
  },
  json: { help: 'Print results as JSON, for scripts' },
  help: { help: 'Print usage information' },
};
