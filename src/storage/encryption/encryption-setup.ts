// From the broker's brook.encryption.* settings to a loaded key store, or a one-line configuration error naming
// the key to fix. Runs before the log directory is touched: a missing or wrong master key stops the broker with
// nothing written. Also the periodic rotation check (brook.encryption.key.rotation.check.interval.ms).

import { HttpKeyProvider } from './http-key-provider.js';
import { KeyStore } from './key-store.js';
import { EnvKeyProvider, FileKeyProvider } from './local-key-providers.js';
import { MasterKeyError, type MasterKeyProvider } from './master-key-provider.js';

export interface EncryptionSettings {
  readonly enable: boolean;
  readonly provider: string | null;
  readonly keyFile: string | null;
  readonly keyEnv: string;
  readonly httpUrl: string | null;
  readonly httpKeyId: string | null;
  readonly httpToken: string | null;
  readonly httpTimeoutMs: number;
}

/** A startup failure caused by one brook.encryption.* key (see cli/startup-failure.ts). */
export class EncryptionConfigError extends Error {
  override readonly name = 'EncryptionConfigError';
  constructor(
    readonly configKey: string,
    message: string,
  ) {
    super(message);
  }
}

/** The key that selects where the master keys of `provider` are. */
function providerKey(provider: string | null): string {
  if (provider === 'file') return 'brook.encryption.key.file';
  if (provider === 'env') return 'brook.encryption.key.env';
  if (provider === 'http') return 'brook.encryption.key.http.url';
  return 'brook.encryption.key.provider';
}

export function createProvider(
  settings: EncryptionSettings,
  env: NodeJS.ProcessEnv = process.env,
): MasterKeyProvider {
  switch (settings.provider) {
    case 'file':
      if (settings.keyFile === null)
        throw new MasterKeyError('provider file needs brook.encryption.key.file');
      return new FileKeyProvider(settings.keyFile);
    case 'env':
      return new EnvKeyProvider(settings.keyEnv, env);
    case 'http':
      if (settings.httpUrl === null)
        throw new MasterKeyError('provider http needs brook.encryption.key.http.url');
      return new HttpKeyProvider({
        url: settings.httpUrl,
        keyId: settings.httpKeyId,
        token: settings.httpToken,
        timeoutMs: settings.httpTimeoutMs,
      });
    default:
      throw new MasterKeyError('no key provider is configured');
  }
}

/**
 * The key store of `dir`, loaded and (when anything may be encrypted) given a current key-encryption key; null
 * when no provider is configured and the directory has never held encrypted segments.
 */
export async function openKeyStore(
  settings: EncryptionSettings,
  dir: string,
  nowMs: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<KeyStore | null> {
  if (settings.provider === null) {
    if (settings.enable) {
      throw new EncryptionConfigError(
        'brook.encryption.key.provider',
        'brook.encryption.enable=true needs a key provider (file, env or http)',
      );
    }
    if (KeyStore.existsIn(dir)) {
      throw new EncryptionConfigError(
        'brook.encryption.key.provider',
        `${dir} holds encrypted segments (encryption.keys); set the key provider that reads them`,
      );
    }
    return null;
  }
  const key = providerKey(settings.provider);
  try {
    const store = await KeyStore.load(dir, createProvider(settings, env));
    // Only once every key needed is unwrapped and the provider has wrapped the first KEK (a first start) is
    // anything written: the store makes the directory as it writes its file.
    await store.ensureCurrent(nowMs);
    return store;
  } catch (err) {
    if (err instanceof MasterKeyError) throw new EncryptionConfigError(key, err.message);
    throw err;
  }
}

/** The periodic rotation check: one at a time, each logged when it changed something. */
export class KeyRotation {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: KeyStore,
    private readonly log: { info(m: string): void; error(m: string): void },
    private readonly nowMs: () => number,
  ) {}

  start(intervalMs: number): void {
    if (intervalMs <= 0) return;
    this.timer = setInterval(() => void this.check(), intervalMs);
    this.timer.unref();
  }

  /** One check now; resolves when it is done (errors are logged: the broker keeps its keys). */
  check(): Promise<void> {
    if (this.running !== null) return this.running;
    this.running = this.store
      .rotate(this.nowMs(), (m) => this.log.error(m))
      .then(
        (r) => {
          if (r.newKek !== null || r.rewrapped > 0) {
            this.log.info(
              `encryption: master key '${r.masterKeyId}' is current; new segments use key-encryption key ${r.newKek ?? '(unchanged)'}, ${r.rewrapped} older keys re-wrapped`,
            );
          }
        },
        (err: unknown) =>
          this.log.error(`encryption: key rotation check failed, keys unchanged: ${(err as Error).message}`),
      )
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
