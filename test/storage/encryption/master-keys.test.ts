// The master key text of the file and env providers (brook.encryption.key.file, brook.encryption.key.env): a
// 256-bit key as 64 hex digits or as base64 (standard or URL-safe), with an id or bare (its id is then its
// fingerprint), entries on lines or separated by commas, the last one current; anything else is refused with a
// message that names where the key came from and never shows the key.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { EnvKeyProvider, FileKeyProvider } from '../../../src/storage/encryption/local-key-providers.js';
import { fingerprint, MasterKeyError } from '../../../src/storage/encryption/master-key-provider.js';
import { tempDir } from '../tmp-dir.js';

test('a key file holds keys in hex or base64; bare keys are named by fingerprint; the last is current', async (t) => {
  const hex = randomBytes(32);
  const b64 = randomBytes(32);
  // A key whose base64 needs the URL-safe alphabet ('-' or '_'), as some tools write it.
  let url = randomBytes(32);
  while (!/[-_]/.test(url.toString('base64url'))) url = randomBytes(32);
  const path = join(tempDir(t), 'master.key');
  writeFileSync(
    path,
    `# master keys\nold:${hex.toString('hex')}\n${b64.toString('base64')}\nnew:${url.toString('base64url')}\n`,
  );
  const provider = new FileKeyProvider(path);
  assert.deepEqual(provider.keyIds(), ['old', fingerprint(b64), 'new']);
  const wrapped = await provider.wrap(Buffer.alloc(32, 7));
  assert.equal(wrapped.keyId, 'new', 'the last entry is current');
  assert.deepEqual(await provider.unwrap('new', wrapped.wrapped), Buffer.alloc(32, 7));
  // Each key decodes to the bytes written: a wrap under it (made by a provider holding it alone) unwraps here.
  for (const [id, key] of [
    ['old', hex.toString('hex')],
    [fingerprint(b64), b64.toString('base64')],
  ] as const) {
    const alone = new EnvKeyProvider('K', { K: id.startsWith('fp-') ? key : `${id}:${key}` });
    const w = await alone.wrap(Buffer.alloc(32, 9));
    assert.equal(w.keyId, id);
    assert.deepEqual(await provider.unwrap(id, w.wrapped), Buffer.alloc(32, 9));
  }
  // Commas separate entries as newlines do (an environment variable is one line).
  const env = new EnvKeyProvider('K', { K: `a:${hex.toString('hex')},b:${b64.toString('base64')}` });
  assert.deepEqual(env.keyIds(), ['a', 'b']);
});

test('a key of the wrong size, an unreadable file, a bad id or no key at all is refused without showing the key', (t) => {
  const dir = tempDir(t);
  const cases: [string, RegExp][] = [
    [randomBytes(16).toString('hex'), /must be 256 bits, as 64 hex digits or base64/],
    [`id:${randomBytes(31).toString('base64')}`, /must be 256 bits/],
    [`bad id!:${randomBytes(32).toString('hex')}`, /key id 'bad id!' is not 1-64 characters/],
    ['# only a comment\n\n', /holds no master key/],
  ];
  for (const [i, [text, message]] of cases.entries()) {
    const path = join(dir, `k${i}`);
    writeFileSync(path, text);
    assert.throws(
      () => new FileKeyProvider(path),
      (err: unknown) =>
        err instanceof MasterKeyError &&
        message.test(err.message) &&
        err.message.includes(path) &&
        !err.message.includes(text.split(':').at(-1)!.trim() || '\u0000'),
    );
  }
  assert.throws(() => new FileKeyProvider(join(dir, 'absent')), /cannot be read \(ENOENT\)/);
});
