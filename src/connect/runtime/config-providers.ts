// Kafka's config providers (KIP-297, KIP-421): `config.providers=file,env` and `config.providers.<name>.class`
// name the providers; `${<name>:<path>:<key>}` (or `${<name>:<key>}`, empty path) in a value is replaced by what
// the provider returns for that path and key. The built-in providers, under Kafka's class names:
// FileConfigProvider (path: a .properties file, key: one of its keys), DirectoryConfigProvider (path: a directory,
// key: a file in it, value: the file's text) and EnvVarConfigProvider (KIP-887: key: an environment variable,
// no path). Their `config.providers.<name>.param.*` keys: `allowed.paths` (file and directory, KIP-993: a
// comma-separated list of directories outside which nothing is read) and `allowlist.pattern` (env: a regex of the
// variables it may return). As in Kafka's ConfigTransformer, a variable whose provider, path or key gives nothing
// stays as written, and the replacement is made once (a value returned is not scanned again).

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import { ConfigException } from '../errors.js';
import { parseProperties } from './properties.js';

export const CONFIG_PROVIDERS_CONFIG = 'config.providers';

/** `${provider:path:key}` / `${provider:key}`, Kafka's ConfigTransformer pattern. */
const VARIABLE = /\$\{([^}]*?):(?:([^}]*?):)?([^}]*?)\}/g;

interface ConfigProvider {
  /** The values of `keys` under `path`: keys it has no value for are left out. */
  get(path: string, keys: ReadonlySet<string>): Map<string, string>;
}

/** KIP-993's `allowed.paths`: null allows every path. */
function allowedPaths(params: Readonly<Record<string, string>>): string[] | null {
  const v = (params['allowed.paths'] ?? '').trim();
  if (v === '') return null;
  return v.split(/\s*,\s*/).map((p) => {
    if (!isAbsolute(p)) throw new ConfigException(`Path ${p} in allowed.paths is not absolute`);
    return normalize(p);
  });
}

/** The path to read, or null when `allowed` excludes it. */
function trustedPath(path: string, allowed: string[] | null): string | null {
  const p = resolve(path);
  if (allowed === null) return p;
  return allowed.some((dir) => {
    const r = relative(dir, p);
    return r === '' || (!r.startsWith(`..${sep}`) && r !== '..' && !isAbsolute(r));
  })
    ? p
    : null;
}

class FileConfigProvider implements ConfigProvider {
  private readonly allowed: string[] | null;
  constructor(params: Readonly<Record<string, string>>) {
    this.allowed = allowedPaths(params);
  }
  get(path: string, keys: ReadonlySet<string>): Map<string, string> {
    const out = new Map<string, string>();
    if (path === '') return out;
    const file = trustedPath(path, this.allowed);
    if (file === null) return out;
    let props: Record<string, string>;
    try {
      props = parseProperties(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new ConfigException(`Could not read properties from file ${path}: ${(err as Error).message}`);
    }
    for (const k of keys) if (props[k] !== undefined) out.set(k, props[k]!);
    return out;
  }
}

class DirectoryConfigProvider implements ConfigProvider {
  private readonly allowed: string[] | null;
  constructor(params: Readonly<Record<string, string>>) {
    this.allowed = allowedPaths(params);
  }
  get(path: string, keys: ReadonlySet<string>): Map<string, string> {
    const out = new Map<string, string>();
    if (path === '') return out;
    const dir = trustedPath(path, this.allowed);
    if (dir === null) return out;
    let names: Set<string>;
    try {
      names = new Set(readdirSync(dir).filter((n) => statSync(join(dir, n)).isFile()));
    } catch (err) {
      throw new ConfigException(`Could not list directory ${path}: ${(err as Error).message}`);
    }
    for (const k of keys) if (names.has(k)) out.set(k, readFileSync(join(dir, k), 'utf8'));
    return out;
  }
}

class EnvVarConfigProvider implements ConfigProvider {
  private readonly allow: RegExp;
  constructor(params: Readonly<Record<string, string>>) {
    const pattern = params['allowlist.pattern'] ?? '.*';
    try {
      this.allow = new RegExp(`^(?:${pattern})$`);
    } catch {
      throw new ConfigException(`Invalid allowlist.pattern ${pattern}`);
    }
  }
  get(path: string, keys: ReadonlySet<string>): Map<string, string> {
    if (path !== '')
      throw new ConfigException(`Path is not supported for EnvVarConfigProvider, invalid value '${path}'`);
    const out = new Map<string, string>();
    for (const k of keys) {
      const v = process.env[k];
      if (v !== undefined && this.allow.test(k)) out.set(k, v);
    }
    return out;
  }
}

const PROVIDER_CLASSES: Record<string, new (params: Readonly<Record<string, string>>) => ConfigProvider> = {
  'org.apache.kafka.common.config.provider.FileConfigProvider': FileConfigProvider,
  'org.apache.kafka.common.config.provider.DirectoryConfigProvider': DirectoryConfigProvider,
  'org.apache.kafka.common.config.provider.EnvVarConfigProvider': EnvVarConfigProvider,
};

/** Replaces config provider variables, as Kafka's ConfigTransformer with the providers a config names. */
export class ConfigTransformer {
  private constructor(private readonly providers: ReadonlyMap<string, ConfigProvider>) {}

  /** The providers named by `config.providers` in `props`; an unknown class is a ConfigException. */
  static fromConfig(props: Readonly<Record<string, string>>): ConfigTransformer {
    const providers = new Map<string, ConfigProvider>();
    const names = (props[CONFIG_PROVIDERS_CONFIG] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    for (const name of names) {
      const key = `${CONFIG_PROVIDERS_CONFIG}.${name}.class`;
      const cls = (props[key] ?? '').trim();
      if (cls === '')
        throw new ConfigException(`Missing required configuration "${key}" for config provider ${name}`);
      const ctor = PROVIDER_CLASSES[cls];
      if (ctor === undefined)
        throw ConfigException.invalid(
          key,
          cls,
          `Class ${cls} cannot be found (built-in: ${Object.keys(PROVIDER_CLASSES).join(', ')})`,
        );
      const paramPrefix = `${CONFIG_PROVIDERS_CONFIG}.${name}.param.`;
      const params: Record<string, string> = {};
      for (const [k, v] of Object.entries(props))
        if (k.startsWith(paramPrefix)) params[k.slice(paramPrefix.length)] = v;
      providers.set(name, new ctor(params));
    }
    return new ConfigTransformer(providers);
  }

  get empty(): boolean {
    return this.providers.size === 0;
  }

  /** `props` with every resolvable variable replaced; the `config.providers*` keys are kept as written. */
  transform(props: Readonly<Record<string, string>>): Record<string, string> {
    if (this.providers.size === 0) return { ...props };
    // Ask each provider once per path for every key wanted there.
    const wanted = new Map<string, Map<string, Set<string>>>();
    for (const [k, v] of Object.entries(props)) {
      if (k.startsWith(`${CONFIG_PROVIDERS_CONFIG}`)) continue;
      for (const m of v.matchAll(VARIABLE)) {
        const [, provider, path = '', key] = m as unknown as [string, string, string | undefined, string];
        if (!this.providers.has(provider)) continue;
        const byPath = wanted.get(provider) ?? new Map<string, Set<string>>();
        wanted.set(provider, byPath);
        const keys = byPath.get(path) ?? new Set<string>();
        byPath.set(path, keys);
        keys.add(key);
      }
    }
    const found = new Map<string, Map<string, Map<string, string>>>();
    for (const [provider, byPath] of wanted) {
      const out = new Map<string, Map<string, string>>();
      for (const [path, keys] of byPath) out.set(path, this.providers.get(provider)!.get(path, keys));
      found.set(provider, out);
    }
    const result: Record<string, string> = {};
    for (const [k, v] of Object.entries(props)) {
      result[k] = k.startsWith(CONFIG_PROVIDERS_CONFIG)
        ? v
        : v.replace(VARIABLE, (whole, provider: string, path: string | undefined, key: string) => {
            return (
              found
                .get(provider)
                ?.get(path ?? '')
                ?.get(key) ?? whole
            );
          });
    }
    return result;
  }

  /**
   * Kafka's reverse transform: task configs a connector derived from its resolved config get back the variables
   * of `raw` wherever they carry a resolved value, so that secrets read through providers are not stored.
   */
  reverse(
    raw: Readonly<Record<string, string>>,
    taskConfigs: Record<string, string>[],
  ): Record<string, string>[] {
    if (this.providers.size === 0) return taskConfigs;
    const resolved = this.transform(raw);
    return taskConfigs.map((c) => {
      const out = { ...c };
      for (const [k, v] of Object.entries(out))
        if (raw[k] !== undefined && raw[k] !== resolved[k] && v === resolved[k]) out[k] = raw[k]!;
      return out;
    });
  }
}
