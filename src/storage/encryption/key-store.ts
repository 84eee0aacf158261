// The key-encryption keys (KEKs) of one log directory, in `encryption.keys`, each wrapped by a master key.
//
// Envelope encryption in two levels: every encrypted segment has its own random data key, wrapped (AES-256-GCM)
// by a KEK of this store and kept in the segment's `.enc` file; each KEK is wrapped by a master key of the
// provider. A segment file is opened synchronously (rolls happen on the append path), so data keys are wrapped and
// unwrapped locally; the provider, which may be a remote service, is called only for the few KEKs: when the store
// is loaded (before any log file is touched), when a new KEK is made, and when rotation re-wraps them.
//
// Rotation: `rotate()` asks the provider to wrap a fresh KEK. When the master key that answers is not the one of
// the current KEK, every older KEK is re-wrapped under the new master key, the file is replaced atomically (tmp,
// fsync, rename, off the event loop), and only then does the fresh KEK become current (new segments use it): old
// segments no longer depend on the old master key without a byte of their own being rewritten, no data key is
// wrapped by a KEK missing from the file, and a rotation that fails half-way changes nothing.
//
// File: JSON {"version":1,"current":"<kek id>","keks":[{"id","masterKeyId","wrapped"(base64),"createdMs","check"}]};
// `check` (base64, see kekCheck) tells at load whether the provider unwrapped a KEK to the key it wrapped.
// Nothing in it is secret: a KEK is only usable through the provider's master key, and a KEK wrap is
// authenticated by the provider, so a changed byte makes loading fail rather than produce a wrong key.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { readSmallFile } from '../atomic-file.js';
import { TMP_SUFFIX } from '../file-names.js';
import {
  LocalKeyProvider,
  MasterKeyError,
  type MasterKeyProvider,
  type WrappedKey,
} from './master-key-provider.js';

export const KEY_STORE_FILE = 'encryption.keys';
const KEY_STORE_BYTES_MAX = 1024 * 1024;
export const KEK_BYTES = 32;

/** A KEK as `encryption.keys` holds it, still wrapped. */
interface StoredKek {
  readonly id: string;
  readonly masterKeyId: string;
  readonly wrapped: Buffer;
  readonly createdMs: number;
  readonly check: Buffer | null;
}

interface KekEntry {
  readonly id: string;
  masterKeyId: string;
  wrapped: Buffer;
  readonly createdMs: number;
  readonly key: Buffer;
}

export class KeyStore {
  private constructor(
    readonly dir: string,
    private readonly provider: MasterKeyProvider,
    private readonly keks: Map<string, KekEntry>,
    private currentId: string | null,
  ) {}

  /**
   * Reads and unwraps every KEK of `dir`, writing nothing. Rejects with MasterKeyError naming the master key and
   * the directory when one cannot be unwrapped (missing or wrong master key). A directory holds a KEK per master
   * key rotation, and a remote provider takes a round trip for each: they are unwrapped UNWRAP_CONCURRENCY at a
   * time, so a start waits for about a round trip per UNWRAP_CONCURRENCY KEKs, not one per KEK.
   */
  static async load(dir: string, provider: MasterKeyProvider): Promise<KeyStore> {
    const keks = new Map<string, KekEntry>();
    const path = join(dir, KEY_STORE_FILE);
    const bytes = readSmallFile(path, KEY_STORE_BYTES_MAX);
    let current: string | null = null;
    if (bytes !== null) {
      const parsed = parseStore(bytes, path);
      const keys = await unwrapAll(parsed.keks, (e) => unwrapStored(path, provider, e));
      for (const [i, e] of parsed.keks.entries()) keks.set(e.id, { ...e, key: keys[i]! });
      current = parsed.current !== null && keks.has(parsed.current) ? parsed.current : null;
    }
    return new KeyStore(dir, provider, keks, current);
  }

  /** Whether a store file exists in `dir` (a directory that once held encrypted segments). */
  static existsIn(dir: string): boolean {
    return existsSync(join(dir, KEY_STORE_FILE));
  }

  /** The KEK with this id, or undefined (a segment whose KEK is gone cannot be read). */
  kek(id: string): Buffer | undefined {
    return this.keks.get(id)?.key;
  }

  /** The KEK new segments use; `ensureCurrent` made it. */
  current(): { readonly id: string; readonly key: Buffer } {
    if (this.currentId === null) throw new MasterKeyError(`${this.dir}: no key-encryption key yet`);
    return { id: this.currentId, key: this.keks.get(this.currentId)!.key };
  }

  get hasCurrent(): boolean {
    return this.currentId !== null;
  }

  /** Master key ids that KEKs of this store depend on. */
  masterKeysInUse(): Set<string> {
    return new Set([...this.keks.values()].map((e) => e.masterKeyId));
  }

  /** Makes a current KEK when there is none (first use), wrapped by the provider's current master key. */
  async ensureCurrent(nowMs: number): Promise<void> {
    if (this.currentId !== null) return;
    await this.addCurrent(nowMs);
  }

  /**
   * One rotation check: re-reads the provider's keys; when its current master key changed, a new KEK becomes
   * current and every KEK still wrapped by another master key is re-wrapped. Returns what changed, for the log.
   */
  async rotate(
    nowMs: number,
    warn: (message: string) => void = () => {},
  ): Promise<{ newKek: string | null; rewrapped: number; masterKeyId: string }> {
    await this.provider.refresh();
    // A master key taken out of the provider while KEKs depend on it is not retired yet: the provider keeps it
    // (LocalKeyProvider's retained keys) until the re-wrap below has moved every KEK off it.
    const held = this.provider.keyIds();
    const orphaned = held === null ? [] : [...this.masterKeysInUse()].filter((id) => !held.includes(id));
    for (const id of orphaned) {
      const n = [...this.keks.values()].filter((e) => e.masterKeyId === id).length;
      warn(
        `encryption: master key '${id}' was removed from ${this.provider.description} while ${n} key-encryption keys of ${this.dir} depend on it: retirement refused until they are re-wrapped`,
      );
    }
    const fresh = randomBytes(KEK_BYTES);
    const wrapped = await this.provider.wrap(fresh);
    const current = this.currentId === null ? null : this.keks.get(this.currentId)!;
    const needsNew = current === null || current.masterKeyId !== wrapped.keyId;
    // Checked only when it is kept: an unchanged provider costs one call per check, not two.
    if (needsNew) await this.checkUnwraps(fresh, wrapped);
    // Every older KEK is wrapped again before anything changes: a provider failing half-way leaves the store as it
    // was (the old KEK stays current, the file untouched), as the rotation check's log line says.
    const rewraps: { entry: KekEntry; again: WrappedKey }[] = [];
    for (const entry of this.keks.values()) {
      if (entry.masterKeyId === wrapped.keyId) continue;
      rewraps.push({ entry, again: await this.wrapChecked(entry.key) });
    }
    if (!needsNew && rewraps.length === 0) return { newKek: null, rewrapped: 0, masterKeyId: wrapped.keyId };
    // The new state is durable before it is used: a segment's data key is never wrapped by a KEK that a crash
    // could leave out of encryption.keys (its segment would then be unreadable).
    const entries = [...this.keks.values()].map((e) => {
      const r = rewraps.find((x) => x.entry === e);
      return r === undefined ? e : { ...e, masterKeyId: r.again.keyId, wrapped: r.again.wrapped };
    });
    const added: KekEntry | null = needsNew
      ? {
          id: randomBytes(8).toString('hex'),
          masterKeyId: wrapped.keyId,
          wrapped: wrapped.wrapped,
          createdMs: nowMs,
          key: fresh,
        }
      : null;
    if (added !== null) entries.push(added);
    const currentId = added?.id ?? this.currentId;
    await this.file.write(serialize(currentId, entries));
    // No await from here on: the file and memory change together as far as any append can tell.
    this.keks.clear();
    for (const e of entries) this.keks.set(e.id, e);
    this.currentId = currentId;
    if (this.provider instanceof LocalKeyProvider) {
      const inUse = this.masterKeysInUse();
      for (const id of orphaned) if (!inUse.has(id)) this.provider.forgetRetained(id);
    }
    return { newKek: added?.id ?? null, rewrapped: rewraps.length, masterKeyId: wrapped.keyId };
  }

  private async addCurrent(nowMs: number): Promise<void> {
    const key = randomBytes(KEK_BYTES);
    const wrapped = await this.wrapChecked(key);
    const entry: KekEntry = {
      id: randomBytes(8).toString('hex'),
      masterKeyId: wrapped.keyId,
      wrapped: wrapped.wrapped,
      createdMs: nowMs,
      key,
    };
    await this.file.write(serialize(entry.id, [...this.keks.values(), entry]));
    this.keks.set(entry.id, entry);
    this.currentId = entry.id;
  }

  /**
   * The provider's wrap of `key`, unwrapped again before anything relies on it: a key service that answers a wrap
   * it cannot undo (a key it lost, a misrouted adapter) would otherwise leave segments written under a KEK no later
   * start can unwrap. The message names the service and the master key, never the key.
   */
  private async wrapChecked(key: Buffer): Promise<WrappedKey> {
    const wrapped = await this.provider.wrap(key);
    await this.checkUnwraps(key, wrapped);
    return wrapped;
  }

  private async checkUnwraps(key: Buffer, wrapped: WrappedKey): Promise<void> {
    const back = await this.provider.unwrap(wrapped.keyId, wrapped.wrapped);
    if (back.length !== key.length || !timingSafeEqual(back, key)) {
      throw new MasterKeyError(
        `${this.provider.description}: master key '${wrapped.keyId}' does not unwrap to the key it wrapped`,
      );
    }
  }

  private get file(): { write(content: string): Promise<void> } {
    return {
      write: (content) => {
        // A first start: the log directory is made here, after the provider wrapped the key, not before.
        mkdirSync(this.dir, { recursive: true });
        return writeFileAtomicAsync(join(this.dir, KEY_STORE_FILE), content);
      },
    };
  }
}

/**
 * The check value of a KEK, stored with it: HMAC-SHA256 of a fixed label under the KEK, 16 bytes. It tells whether
 * an unwrap gave the key back and reveals nothing of the key.
 */
function kekCheck(key: Buffer): Buffer {
  return createHmac('sha256', key).update('brook kek check 1').digest().subarray(0, 16);
}

function serialize(current: string | null, keks: readonly KekEntry[]): string {
  const entries = keks.map((e) => ({
    id: e.id,
    masterKeyId: e.masterKeyId,
    wrapped: e.wrapped.toString('base64'),
    createdMs: e.createdMs,
    check: kekCheck(e.key).toString('base64'),
  }));
  return `${JSON.stringify({ version: 1, current, keks: entries })}\n`;
}

/** writeFileAtomic off the event loop (tmp, fsync, rename, fsync of the directory): a rotation never stalls it. */
async function writeFileAtomicAsync(path: string, content: string): Promise<void> {
  const tmp = `${path}${TMP_SUFFIX}`;
  const handle = await open(tmp, 'w');
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, path);
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

function parseStore(
  bytes: Buffer,
  path: string,
): {
  current: string | null;
  keks: StoredKek[];
} {
  const bad = (why: string): MasterKeyError => new MasterKeyError(`${path} is damaged: ${why}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw bad('not JSON');
  }
  const o = parsed as { version?: unknown; current?: unknown; keks?: unknown };
  if (o.version !== 1 || !Array.isArray(o.keks)) throw bad('version or keks missing');
  const keks = o.keks.map((k: unknown) => {
    const e = k as {
      id?: unknown;
      masterKeyId?: unknown;
      wrapped?: unknown;
      createdMs?: unknown;
      check?: unknown;
    };
    if (typeof e.id !== 'string' || typeof e.masterKeyId !== 'string' || typeof e.wrapped !== 'string') {
      throw bad('an entry lacks id, masterKeyId or wrapped');
    }
    return {
      id: e.id,
      masterKeyId: e.masterKeyId,
      wrapped: Buffer.from(e.wrapped, 'base64'),
      createdMs: typeof e.createdMs === 'number' ? e.createdMs : 0,
      // Absent in files written before check values: such a KEK is checked once a rotation rewrites the file.
      check: typeof e.check === 'string' ? Buffer.from(e.check, 'base64') : null,
    };
  });
  return { current: typeof o.current === 'string' ? o.current : null, keks };
}

/** How many stored KEKs a load asks the provider to unwrap at once. */
const UNWRAP_CONCURRENCY = 8;

/** One stored KEK unwrapped and checked; a MasterKeyError names it, its master key and the file. */
async function unwrapStored(path: string, provider: MasterKeyProvider, e: StoredKek): Promise<Buffer> {
  let key: Buffer;
  try {
    key = await provider.unwrap(e.masterKeyId, e.wrapped);
  } catch (err) {
    const why = err instanceof MasterKeyError ? err.message : String(err);
    throw new MasterKeyError(
      `${path}: key-encryption key ${e.id} is wrapped by master key '${e.masterKeyId}', which cannot unwrap it: ${why}`,
    );
  }
  if (key.length !== KEK_BYTES)
    throw new MasterKeyError(`${path}: key ${e.id} unwraps to ${key.length} bytes`);
  // A provider's unwrap need not be authenticated (a key service may answer any 32 bytes): the stored check
  // value tells a wrong key here, before a segment is opened or written with it.
  if (e.check !== null && !(e.check.length === 16 && timingSafeEqual(kekCheck(key), e.check))) {
    throw new MasterKeyError(
      `${path}: ${provider.description} gave a different key for key-encryption key ${e.id} (master key '${e.masterKeyId}') than the one it wrapped`,
    );
  }
  return key;
}

/**
 * `unwrap` of every entry, at most UNWRAP_CONCURRENCY at once, the results in the entries' order. After a failure
 * no further entry is started; once those under way have settled, the failure of the first failed entry (in file
 * order) is thrown, so the message does not depend on which answer came first.
 */
async function unwrapAll<E>(entries: readonly E[], unwrap: (e: E) => Promise<Buffer>): Promise<Buffer[]> {
  const keys: Buffer[] = new Array(entries.length);
  const failures = new Map<number, unknown>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < entries.length && failures.size === 0) {
      const i = next++;
      try {
        keys[i] = await unwrap(entries[i]!);
      } catch (err) {
        failures.set(i, err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(UNWRAP_CONCURRENCY, entries.length) }, worker));
  if (failures.size > 0) throw failures.get(Math.min(...failures.keys()));
  return keys;
}
