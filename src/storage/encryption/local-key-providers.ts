// The two providers whose master keys Brook holds itself: a key file (brook.encryption.key.file) and an
// environment variable (brook.encryption.key.env names it). Both read the key text format of
// master-key-provider.ts. The file is re-read by `refresh` (the rotation check), so a key appended to it becomes
// current without a restart; the environment cannot change under a running process.

import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { LocalKeyProvider, MasterKeyError, parseMasterKeys } from './master-key-provider.js';

/** Longest key file read: a few hundred keys, far more than rotation ever keeps. */
const KEY_FILE_BYTES_MAX = 64 * 1024;

export class FileKeyProvider extends LocalKeyProvider {
  readonly description: string;

  constructor(private readonly path: string) {
    super();
    this.description = `key file ${path}`;
    this.replaceKeys(parseMasterKeys(readKeyFileSync(path), this.description));
  }

  async refresh(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      throw new MasterKeyError(`${this.description} cannot be read: ${(err as Error).message}`);
    }
    this.replaceKeys(parseMasterKeys(text, this.description));
  }
}

function readKeyFileSync(path: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new MasterKeyError(`key file ${path} cannot be read (${code ?? (err as Error).message})`);
  }
  if (bytes.length > KEY_FILE_BYTES_MAX) throw new MasterKeyError(`key file ${path} is over 64 KiB`);
  return bytes.toString('utf8');
}

export class EnvKeyProvider extends LocalKeyProvider {
  readonly description: string;

  constructor(variable: string, env: NodeJS.ProcessEnv = process.env) {
    super();
    this.description = `environment variable ${variable}`;
    const text = env[variable];
    if (text === undefined || text.trim() === '') throw new MasterKeyError(`${this.description} is not set`);
    this.replaceKeys(parseMasterKeys(text, this.description));
  }

  async refresh(): Promise<void> {}
}
