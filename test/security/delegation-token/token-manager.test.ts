// Delegation tokens in the store as Kafka keeps them in ZooKeeper, with two managers on one store standing for
// two brokers: the znode JSON at /delegation_token/tokens/<id>, notifications under token_changes, a token
// created, renewed and expired through one manager known to the other, expired tokens removed, SCRAM
// credentials from the HMAC, and a key-less manager disabled.

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { silentLogger } from '../../../src/common/logger.js';
import { InProcessStore } from '../../../src/controller/store/in-process-store.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { DelegationTokenManager } from '../../../src/security/delegation-token/token-manager.js';
import { credentialFromSalted, saltedPassword } from '../../../src/security/sasl/scram-credential.js';
import { waitUntil } from '../../helpers/wait.js';

const SECRET = 'token-secret';
const settings = {
  secretKey: SECRET,
  maxLifetimeMs: 10_000,
  expiryTimeMs: 4_000,
  expiryCheckIntervalMs: 3_600_000,
};

describe('delegation token manager', () => {
  const store = InProcessStore.open({ dataDir: null });
  let nowMs = 1_000_000;
  const clock = () => nowMs;
  const a = new DelegationTokenManager(store.openSession(), settings, silentLogger, clock);
  const b = new DelegationTokenManager(store.openSession(), settings, silentLogger, clock);
  after(() => {
    a.stop();
    b.stop();
  });

  it('stores a created token as Kafka does and every manager learns it', async () => {
    await a.start();
    await b.start();
    const created = await a.create('User:alice', 'User:alice', ['User:bob'], 0);
    assert.equal(created.errorCode, ErrorCode.NONE);
    const token = created.token!;
    assert.match(token.tokenId, /^[A-Za-z0-9_-]{22}$/);
    assert.deepEqual(created.hmac, createHmac('sha512', SECRET).update(token.tokenId).digest());
    assert.equal(token.expiryTimestampMs, nowMs + 4_000);
    assert.equal(token.maxTimestampMs, nowMs + 10_000);
    const session = store.openSession();
    const node = await session.get(`/delegation_token/tokens/${token.tokenId}`);
    assert.ok(node.ok);
    assert.deepEqual(JSON.parse(Buffer.from(node.value.data).toString()), {
      version: 3,
      owner: 'User%3Aalice',
      tokenRequester: 'User%3Aalice',
      renewers: ['User%3Abob'],
      issueTimestamp: nowMs,
      maxTimestamp: nowMs + 10_000,
      expiryTimestamp: nowMs + 4_000,
      tokenId: token.tokenId,
    });
    const changes = await session.children('/delegation_token/token_changes');
    assert.ok(changes.ok && changes.value.some((n) => /^token_change_\d{10}$/.test(n)));
    await waitUntil(
      () => b.describe(() => true).length === 1,
      10_000,
      () => 'token not propagated',
    );
    assert.deepEqual(b.describe(() => true)[0]!.hmac, created.hmac);

    // Renewed through the other manager by a renewer, the new expiry reaches the first.
    nowMs += 1_000;
    assert.deepEqual(await b.renew('User:carol', created.hmac, 1_000), {
      errorCode: ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH,
      expiryTimestampMs: -1,
    });
    const renewed = await b.renew('User:bob', created.hmac, 100_000);
    assert.deepEqual(renewed, { errorCode: ErrorCode.NONE, expiryTimestampMs: token.maxTimestampMs });
    await waitUntil(
      () => a.describe(() => true)[0]?.token.expiryTimestampMs === token.maxTimestampMs,
      10_000,
      () => 'renewal not propagated',
    );
    assert.equal(
      (await a.renew('User:alice', Buffer.from('not a token'), 1)).errorCode,
      ErrorCode.DELEGATION_TOKEN_NOT_FOUND,
    );

    // The token's SCRAM credential: the base64 HMAC is the password.
    const found = a.tokenCredential(token.tokenId, 'SCRAM-SHA-256')!;
    assert.equal(found.owner, 'User:alice');
    const c = found.credential;
    const expected = credentialFromSalted(
      'SCRAM-SHA-256',
      c.salt,
      saltedPassword('SCRAM-SHA-256', created.hmac.toString('base64'), c.salt, c.iterations),
      c.iterations,
    );
    assert.deepEqual(expected.storedKey, c.storedKey);

    // Expired at once by its owner: gone from the store and from both managers.
    const expired = await a.expire('User:alice', created.hmac, -1);
    assert.deepEqual(expired, { errorCode: ErrorCode.NONE, expiryTimestampMs: nowMs });
    assert.equal(
      ((await session.get(`/delegation_token/tokens/${token.tokenId}`)) as { ok: boolean }).ok,
      false,
    );
    await waitUntil(
      () => b.describe(() => true).length === 0,
      10_000,
      () => 'token not propagated',
    );
    assert.equal(a.tokenCredential(token.tokenId, 'SCRAM-SHA-256'), null);
  });

  it('refuses to renew an expired token and removes expired tokens', async () => {
    const created = await a.create('User:alice', 'User:alice', [], 2_000);
    const token = created.token!;
    assert.equal(token.maxTimestampMs, nowMs + 2_000);
    assert.equal(token.expiryTimestampMs, nowMs + 2_000);
    await waitUntil(
      () => b.describe(() => true).length === 1,
      10_000,
      () => 'token not propagated',
    );
    nowMs += 2_001;
    assert.equal(
      (await a.renew('User:alice', created.hmac, 1_000)).errorCode,
      ErrorCode.DELEGATION_TOKEN_EXPIRED,
    );
    assert.equal(a.tokenCredential(token.tokenId, 'SCRAM-SHA-512'), null);
    await b.removeExpired();
    await waitUntil(
      () => a.describe(() => true).length === 0,
      10_000,
      () => 'token not propagated',
    );
    const session = store.openSession();
    const ids = await session.children('/delegation_token/tokens');
    assert.deepEqual(ids.ok && ids.value, []);
  });

  it('a restarted manager reads the stored tokens back', async () => {
    const created = await a.create('User:dave', 'User:admin', [], 0);
    const c = new DelegationTokenManager(store.openSession(), settings, silentLogger, clock);
    await c.start();
    c.stop();
    const [listed] = c.describe(() => true);
    assert.equal(listed?.token.owner, 'User:dave');
    assert.equal(listed?.token.tokenRequester, 'User:admin');
    assert.deepEqual(listed?.hmac, created.hmac);
  });

  it('without a secret key every operation is DELEGATION_TOKEN_AUTH_DISABLED and nothing is written', async () => {
    const fresh = InProcessStore.open({ dataDir: null });
    const off = new DelegationTokenManager(fresh.openSession(), { ...settings, secretKey: '' }, silentLogger);
    await off.start();
    assert.equal(off.enabled, false);
    assert.equal(
      (await off.create('User:a', 'User:a', [], 0)).errorCode,
      ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED,
    );
    assert.equal(
      (await off.renew('User:a', Buffer.alloc(64), 0)).errorCode,
      ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED,
    );
    assert.equal(
      (await off.expire('User:a', Buffer.alloc(64), 0)).errorCode,
      ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED,
    );
    const root = await fresh.openSession().exists('/delegation_token');
    assert.ok(root.ok && root.value === null);
  });
});
