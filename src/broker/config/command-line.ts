// The config part of `brook server`'s command line, shaped like Kafka's kafka-server-start: a properties file
// (`--config FILE`, or a bare FILE argument as Kafka takes it) and any number of `--override key=value`, which
// win over the file in the order given. Argument parsing of the rest of the command stays in src/cli.

import { ConfigError } from './config-error.js';

export interface ConfigArgs {
  readonly configPath: string | null;
  readonly overrides: ReadonlyMap<string, string>;
  /** Arguments that are not about configuration, for the caller to handle. */
  readonly rest: readonly string[];
}

/** Splits "key=value" at the first '='; an empty value is allowed ("key="), a missing '=' is not. */
export function parseOverride(text: string): [string, string] {
  const eq = text.indexOf('=');
  if (eq <= 0) {
    throw ConfigError.rule(text, `--override expects key=value, got '${text}'`);
  }
  return [text.slice(0, eq).trim(), text.slice(eq + 1)];
}

export function parseConfigArgs(args: readonly string[]): ConfigArgs {
  let configPath: string | null = null;
  const overrides = new Map<string, string>();
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const flag = arg.startsWith('--') && arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
    if (flag === '--override' || flag === '--config') {
      const value = flag === arg ? args[++i] : arg.slice(flag.length + 1);
      if (value === undefined) throw ConfigError.rule(flag, `${flag} needs a value`);
      if (flag === '--config') configPath = value;
      else {
        const [key, v] = parseOverride(value);
        overrides.set(key, v);
      }
    } else if (!arg.startsWith('-') && configPath === null) {
      configPath = arg;
    } else {
      rest.push(arg);
    }
  }
  return { configPath, overrides, rest };
}

/** The static config: the file's properties with the overrides laid on top. */
export function applyOverrides(
  fileProps: ReadonlyMap<string, string>,
  overrides: ReadonlyMap<string, string>,
): Map<string, string> {
  const merged = new Map(fileProps);
  for (const [key, value] of overrides) merged.set(key, value);
  return merged;
}
