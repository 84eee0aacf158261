// The key store of a test's log directory: a master key file in `root` (one key, `keyId:keyHex`, as the file
// provider reads it) and the directory's KeyStore loaded from it, with a current data key for the log to use.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KeyStore } from '../../../src/storage/encryption/key-store.js';
import { FileKeyProvider } from '../../../src/storage/encryption/local-key-providers.js';

/** Writes `root`/master.key and answers `dir`'s key store (dir must exist). */
export async function keyStoreIn(
  root: string,
  dir: string,
  keyId = 'k1',
  keyHex = 'c'.repeat(64),
): Promise<KeyStore> {
  const keyFile = join(root, 'master.key');
  writeFileSync(keyFile, `${keyId}:${keyHex}\n`);
  const store = await KeyStore.load(dir, new FileKeyProvider(keyFile));
  await store.ensureCurrent(0);
  return store;
}
