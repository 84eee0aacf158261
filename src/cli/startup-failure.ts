// What `brook server` prints when the broker cannot start because of its configuration: one line naming the key,
// its value and why (a log directory that cannot be made or is in use, a listener that cannot be bound, a
// ZooKeeper ensemble that cannot be reached), instead of a stack trace. Failures that do not trace back to a
// setting are bugs and keep their stack.

import type { BrokerConfig } from '../broker/config/broker-config.js';

/** Errors from the operating system carry these (Node's SystemError and fs errors). */
interface SystemErrorLike {
  readonly code?: unknown;
  readonly syscall?: unknown;
  readonly path?: unknown;
}

const LISTEN_CODES = new Set(['EADDRINUSE', 'EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN', 'EACCES']);

/** The setting behind a startup failure, or null when it is not one. */
function settingOf(err: Error, config: BrokerConfig): string | null {
  const e = err as Error & SystemErrorLike;
  // A missing or wrong master key names the brook.encryption.* key that chose it (storage/encryption).
  if (err.name === 'EncryptionConfigError') return (err as Error & { configKey: string }).configKey;
  if (err.name === 'MetadataLockedError' || err.name === 'MetadataCorruptError') return 'log.dirs';
  if (typeof e.path === 'string' && config.logDirs.some((dir) => (e.path as string).startsWith(dir))) {
    return 'log.dirs';
  }
  if (e.syscall === 'listen' || e.syscall === 'bind' || e.syscall === 'getaddrinfo') return 'listeners';
  if (typeof e.code === 'string' && LISTEN_CODES.has(e.code) && e.path === undefined) return 'listeners';
  if (/zookeeper/i.test(err.message) && config.zookeeperConnect !== null) return 'zookeeper.connect';
  return null;
}

/**
 * One line for a startup failure caused by a setting ("invalid configuration: key=value: why"), or null when
 * the failure does not trace back to one.
 */
export function describeStartupFailure(
  err: unknown,
  config: BrokerConfig,
  staticConfig: ReadonlyMap<string, string>,
): string | null {
  if (!(err instanceof Error)) return null;
  const key = settingOf(err, config);
  if (key === null) return null;
  const value =
    staticConfig.get(key) ??
    (key === 'log.dirs' ? (staticConfig.get('log.dir') ?? config.logDirs.join(',')) : '(default)');
  return `invalid configuration: ${key}=${withoutUrlCredentials(value)}: ${err.message}`;
}

/** A value that is a url with a user or password in it, printed without them (a key service url, say). */
function withoutUrlCredentials(value: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(value)) return value;
  try {
    const url = new URL(value);
    url.username = '';
    url.password = '';
    return url.href;
  } catch {
    return value.replace(/\/\/[^/]*@/, '//');
  }
}
