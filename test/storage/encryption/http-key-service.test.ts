// The http key provider against a real key service over TCP, holding it to the documented contract
// (src/storage/README.md, "HTTP key service contract"): brook.encryption.key.http.key.id is sent in wrap requests and
// the answer's keyId is what the key store records; a rotation made inside the service (wrap answers a new keyId)
// makes a new key-encryption key current and re-wraps the older ones, after which the old service key is needed by
// nothing; a service that does not answer within brook.encryption.key.http.timeout.ms (headers or body), one that
// is not listening, and one that answers no JSON are failures with a message naming the service, never a key (not
// even when its error repeats the request); a wrap the service does not unwrap back is never used.

import assert from 'node:assert/strict';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { HttpKeyProvider } from '../../../src/storage/encryption/http-key-provider.js';
import { KEY_STORE_FILE, KeyStore } from '../../../src/storage/encryption/key-store.js';
import { MasterKeyError } from '../../../src/storage/encryption/master-key-provider.js';
import { tempDir } from '../tmp-dir.js';

interface Service {
  readonly url: string;
  /** The service's current key id (wrap answers with it unless the request names one). */
  current: string;
  /** Wrap requests from this many on (counted from 0) answer 500, when set. */
  failWrapsFrom: number | null;
  /** Unwrap answers 32 random bytes: a service that lost or swapped the key its wrap used. */
  unwrapLies: boolean;
  readonly keys: Map<string, Buffer>;
  readonly wrapRequests: { keyId?: string }[];
  readonly unwrapRequests: { keyId: string }[];
  /** Each unwrap is answered after this long; the most unwraps seen waiting at once are counted. */
  unwrapDelayMs: number;
  unwrapsInFlight: number;
  maxUnwrapsInFlight: number;
  close(): Promise<void>;
}

/** A key service with the documented contract, its keys in memory, AES-256-GCM wraps. */
async function startService(
  mode: 'ok' | 'silent' | 'not-json' | 'stalled-body' | 'echo-error' = 'ok',
): Promise<Service> {
  const keys = new Map<string, Buffer>([['svc-1', randomBytes(32)]]);
  const held: { destroy(): void }[] = [];
  const service: Omit<Service, 'url' | 'close'> = {
    current: 'svc-1',
    failWrapsFrom: null,
    unwrapLies: false,
    keys,
    wrapRequests: [],
    unwrapRequests: [],
    unwrapDelayMs: 0,
    unwrapsInFlight: 0,
    maxUnwrapsInFlight: 0,
  };
  const server: Server = createServer((req, res) => {
    held.push(res.socket!);
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    const respond = () => {
      if (mode === 'silent') return; // never answers
      if (mode === 'stalled-body') {
        // The status line and headers, then nothing: the body never ends.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"keyId":');
        return;
      }
      if (mode === 'echo-error') {
        // A careless adapter: its error repeats the request it refused, key bytes included.
        res.writeHead(400, { 'content-type': 'text/plain' });
        res.end(`bad request ${body}`);
        return;
      }
      const answer = (status: number, json: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(mode === 'not-json' ? 'not json' : JSON.stringify(json));
      };
      const input = JSON.parse(body) as { keyId?: string; plaintext?: string; ciphertext?: string };
      if (req.url === '/wrap') {
        service.wrapRequests.push({ ...(input.keyId === undefined ? {} : { keyId: input.keyId }) });
        if (service.failWrapsFrom !== null && service.wrapRequests.length > service.failWrapsFrom) {
          return answer(500, { error: 'key service failing' });
        }
        const keyId = input.keyId ?? service.current;
        const key = keys.get(keyId);
        if (key === undefined) return answer(404, { error: `no key ${keyId}` });
        const iv = randomBytes(12);
        const c = createCipheriv('aes-256-gcm', key, iv);
        const ct = Buffer.concat([
          c.update(Buffer.from(input.plaintext!, 'base64')),
          c.final(),
          c.getAuthTag(),
        ]);
        return answer(200, { keyId, ciphertext: Buffer.concat([iv, ct]).toString('base64') });
      }
      if (req.url === '/unwrap') {
        service.unwrapRequests.push({ keyId: input.keyId! });
        if (service.unwrapLies) return answer(200, { plaintext: randomBytes(32).toString('base64') });
        const key = keys.get(input.keyId!);
        if (key === undefined) return answer(404, { error: `no key ${input.keyId}` });
        const raw = Buffer.from(input.ciphertext!, 'base64');
        const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
        d.setAuthTag(raw.subarray(raw.length - 16));
        try {
          const plain = Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]);
          return answer(200, { plaintext: plain.toString('base64') });
        } catch {
          return answer(400, { error: 'does not unwrap' });
        }
      }
      answer(404, { error: 'no such operation' });
    };
    req.on('end', () => {
      if (req.url !== '/unwrap' || service.unwrapDelayMs === 0) {
        respond();
        return;
      }
      service.unwrapsInFlight++;
      service.maxUnwrapsInFlight = Math.max(service.maxUnwrapsInFlight, service.unwrapsInFlight);
      setTimeout(() => {
        service.unwrapsInFlight--;
        respond();
      }, service.unwrapDelayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(service, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of held) s.destroy();
        server.close(() => r());
      }),
  });
}

function provider(url: string, keyId: string | null = null, timeoutMs = 10_000): HttpKeyProvider {
  return new HttpKeyProvider({ url, keyId, token: null, timeoutMs });
}

function storeFile(dir: string): { current: string; keks: { id: string; masterKeyId: string }[] } {
  return JSON.parse(readFileSync(join(dir, KEY_STORE_FILE), 'utf8'));
}

test('http.key.id is sent in wrap requests, and the answered keyId is what the store records', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  service.keys.set('pinned', randomBytes(32));
  const dir = join(tempDir(t), 'logs');
  mkdirSync(dir);
  const store = await KeyStore.load(dir, provider(service.url, 'pinned'));
  await store.ensureCurrent(1);
  assert.deepEqual(service.wrapRequests, [{ keyId: 'pinned' }]);
  assert.deepEqual(
    storeFile(dir).keks.map((k) => k.masterKeyId),
    ['pinned'],
  );
  // Loading again unwraps through the service, naming the key the wrap answered.
  service.unwrapRequests.length = 0;
  const again = await KeyStore.load(dir, provider(service.url, 'pinned'));
  assert.deepEqual(service.unwrapRequests, [{ keyId: 'pinned' }]);
  assert.deepEqual(again.current().key, store.current().key);
});

test('a rotation inside the service: a new key-encryption key is current, older ones are re-wrapped', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  const dir = join(tempDir(t), 'logs');
  mkdirSync(dir);
  const store = await KeyStore.load(dir, provider(service.url));
  await store.ensureCurrent(1);
  const first = store.current();
  // Nothing changed in the service: a check makes no new key and re-wraps nothing.
  assert.deepEqual(await store.rotate(2), { newKek: null, rewrapped: 0, masterKeyId: 'svc-1' });
  service.keys.set('svc-2', randomBytes(32));
  service.current = 'svc-2';
  const r = await store.rotate(3);
  assert.ok(r.newKek !== null && r.newKek !== first.id, 'a new key-encryption key');
  assert.equal(r.rewrapped, 1);
  assert.equal(r.masterKeyId, 'svc-2');
  const file = storeFile(dir);
  assert.equal(file.current, r.newKek);
  assert.deepEqual(
    file.keks.map((k) => k.masterKeyId),
    ['svc-2', 'svc-2'],
  );
  // The service retires svc-1: the store still loads, and the first key is still there for old segments.
  service.keys.delete('svc-1');
  const reloaded = await KeyStore.load(dir, provider(service.url));
  assert.deepEqual(reloaded.kek(first.id), first.key);
  assert.equal(reloaded.current().id, r.newKek);
});

test('a rotation the service fails half-way changes nothing: the old key stays current, the file untouched', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  const dir = join(tempDir(t), 'logs');
  mkdirSync(dir);
  const store = await KeyStore.load(dir, provider(service.url));
  await store.ensureCurrent(1);
  const first = store.current();
  const before = readFileSync(join(dir, KEY_STORE_FILE));
  service.keys.set('svc-2', randomBytes(32));
  service.current = 'svc-2';
  // The fresh key's wrap succeeds, the re-wrap of the first key fails.
  service.failWrapsFrom = service.wrapRequests.length + 1;
  await assert.rejects(
    store.rotate(2),
    (err: unknown) => err instanceof MasterKeyError && /answered 500/.test(err.message),
  );
  // New segments keep using a key the file holds: a crash now loses nothing.
  assert.equal(store.current().id, first.id);
  assert.deepEqual(readFileSync(join(dir, KEY_STORE_FILE)), before);
  // Once the service works again, the rotation completes, and the file holds the key then current.
  service.failWrapsFrom = null;
  const r = await store.rotate(3);
  assert.ok(r.newKek !== null);
  assert.equal(store.current().id, r.newKek);
  assert.ok(storeFile(dir).keks.some((k) => k.id === r.newKek && k.masterKeyId === 'svc-2'));
  assert.equal(storeFile(dir).current, r.newKek);
});

test('a service that does not answer in time, is not listening, or answers no JSON: a MasterKeyError', async (t) => {
  const silent = await startService('silent');
  t.after(() => silent.close());
  const started = Date.now();
  await assert.rejects(
    provider(silent.url, null, 300).wrap(randomBytes(32)),
    (err: unknown) => err instanceof MasterKeyError && /key service .*\/wrap unreachable/.test(err.message),
  );
  // The deadline is what stopped it (generous bound: a loaded machine may be slow to fire the timer).
  assert.ok(Date.now() - started < 8000, `waited ${Date.now() - started} ms`);

  const gone = await startService();
  const url = gone.url;
  await gone.close();
  await assert.rejects(
    provider(url).unwrap('svc-1', randomBytes(60)),
    (err: unknown) => err instanceof MasterKeyError && /\/unwrap unreachable/.test(err.message),
  );

  const garbled = await startService('not-json');
  t.after(() => garbled.close());
  await assert.rejects(
    provider(garbled.url).wrap(randomBytes(32)),
    (err: unknown) => err instanceof MasterKeyError && /answered no JSON object/.test(err.message),
  );
  const dir = join(tempDir(t), 'logs');
  mkdirSync(dir);
  // A key store cannot be made against it, and nothing is written.
  const store = await KeyStore.load(dir, provider(garbled.url));
  await assert.rejects(store.ensureCurrent(1), MasterKeyError);
  assert.equal(KeyStore.existsIn(dir), false);
});

test('a service whose unwrap does not give back what it wrapped: no key is made or rotated to, nothing written', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  const dir = join(tempDir(t), 'logs');
  mkdirSync(dir);
  service.unwrapLies = true;
  const store = await KeyStore.load(dir, provider(service.url));
  // A key the service cannot give back would make every segment written under it unreadable at the next start.
  await assert.rejects(
    store.ensureCurrent(1),
    (err: unknown) =>
      err instanceof MasterKeyError && /does not unwrap to the key it wrapped/.test(err.message),
  );
  assert.equal(KeyStore.existsIn(dir), false);
  service.unwrapLies = false;
  await store.ensureCurrent(2);
  const first = store.current();
  const before = readFileSync(join(dir, KEY_STORE_FILE));
  // The same at rotation: the old key stays current and the file as it was.
  service.keys.set('svc-2', randomBytes(32));
  service.current = 'svc-2';
  service.unwrapLies = true;
  await assert.rejects(store.rotate(3), MasterKeyError);
  assert.equal(store.current().id, first.id);
  assert.deepEqual(readFileSync(join(dir, KEY_STORE_FILE)), before);
});

test('a service that sends its headers and then stalls: a MasterKeyError within the timeout', async (t) => {
  const stalled = await startService('stalled-body');
  t.after(() => stalled.close());
  const started = Date.now();
  await assert.rejects(
    provider(stalled.url, null, 300).wrap(randomBytes(32)),
    (err: unknown) => err instanceof MasterKeyError && /key service .*\/wrap .*time/.test(err.message),
  );
  assert.ok(Date.now() - started < 8000, `waited ${Date.now() - started} ms`);
});

test('a service whose error repeats the request: the key sent to it is not in the message', async (t) => {
  const echo = await startService('echo-error');
  t.after(() => echo.close());
  const kek = randomBytes(32);
  await assert.rejects(provider(echo.url).wrap(kek), (err: unknown) => {
    assert.ok(err instanceof MasterKeyError, String(err));
    assert.match(err.message, /answered 400/);
    assert.ok(!err.message.includes(kek.toString('base64').slice(0, 16)), err.message);
    return true;
  });
});

test('a stored key unwrapped to other bytes at load: refused, naming the key and the service', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  const dir = join(tempDir(t), 'logs');
  mkdirSync(dir);
  const store = await KeyStore.load(dir, provider(service.url));
  await store.ensureCurrent(1);
  const kekId = store.current().id;
  const before = readFileSync(join(dir, KEY_STORE_FILE));
  // Its answer has the right length, so only a check of the key itself can tell: segments under it (or made with
  // it as current) would otherwise fail or be unreadable with the right key later.
  service.unwrapLies = true;
  await assert.rejects(
    KeyStore.load(dir, provider(service.url)),
    (err: unknown) =>
      err instanceof MasterKeyError &&
      err.message.includes(kekId) &&
      /key service .* gave a different key/.test(err.message),
  );
  assert.deepEqual(readFileSync(join(dir, KEY_STORE_FILE)), before);
  service.unwrapLies = false;
  assert.deepEqual((await KeyStore.load(dir, provider(service.url))).kek(kekId), store.current().key);
});

test('a url with credentials in it is refused, and the password is in no message', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  const url = service.url.replace('http://', 'http://brook:s3cr3t-pw@');
  const dir = join(tempDir(t), 'logs');
  mkdirSync(dir);
  // fetch refuses such a url on every request; the message naming the service must not repeat the password.
  await assert.rejects(
    (async () => {
      const store = await KeyStore.load(dir, provider(url));
      await store.ensureCurrent(1);
    })(),
    (err: unknown) =>
      err instanceof MasterKeyError && /credentials/.test(err.message) && !err.message.includes('s3cr3t-pw'),
  );
  assert.equal(KeyStore.existsIn(dir), false);
});

test('a load unwraps its stored keys up to 8 at a time, and names the one key that fails', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  const dir = join(tempDir(t), 'logs');
  mkdirSync(dir);
  const store = await KeyStore.load(dir, provider(service.url));
  await store.ensureCurrent(1);
  // Every rotation to a new service key adds a key-encryption key: 20 in the file.
  for (let i = 2; i <= 20; i++) {
    service.keys.set(`svc-${i}`, randomBytes(32));
    service.current = `svc-${i}`;
    await store.rotate(i);
  }
  const ids = storeFile(dir).keks.map((k) => k.id);
  assert.equal(ids.length, 20);
  service.unwrapDelayMs = 30;
  const reloaded = await KeyStore.load(dir, provider(service.url));
  assert.equal(service.maxUnwrapsInFlight, 8);
  for (const id of ids) assert.deepEqual(reloaded.kek(id), store.kek(id), id);
  assert.equal(reloaded.current().id, store.current().id);
  // One stored key damaged: the load fails naming that key, whichever unwrap answers first.
  const path = join(dir, KEY_STORE_FILE);
  const file = JSON.parse(readFileSync(path, 'utf8')) as { keks: { id: string; wrapped: string }[] };
  const damaged = file.keks[13]!;
  const wrapped = Buffer.from(damaged.wrapped, 'base64');
  wrapped[wrapped.length - 1]! ^= 1;
  damaged.wrapped = wrapped.toString('base64');
  writeFileSync(path, JSON.stringify(file));
  await assert.rejects(
    KeyStore.load(dir, provider(service.url)),
    (err: unknown) =>
      err instanceof MasterKeyError && err.message.includes(`key-encryption key ${damaged.id} is wrapped`),
  );
});
