// Delegation tokens (KIP-48) in a 3-broker ZooKeeper cluster: a token created through broker 0 authenticates
// (SASL/SCRAM with tokenauth=true, Brook's client) on brokers 1 and 2 soon after, as each broker learns it from
// the token_changes notification; a renewal through broker 1 is seen by brokers 0 and 2; a token expired through
// one broker, at once or when a short expiry period ends, is refused by all three.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { authenticate } from '../../src/client/sasl.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { ACL_USERS, saslClient, saslOverrides } from '../helpers/acl-broker.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { sleep } from '../helpers/wait.js';
import { WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';

const BROKERS = [0, 1, 2];
let cluster: TestCluster;
const saslPorts: number[] = [];

before(async () => {
  const brokerOverrides: Record<number, Record<string, string | number>> = {};
  for (const id of BROKERS) {
    const plain = await freePort();
    const sasl = await freePort();
    saslPorts[id] = sasl;
    brokerOverrides[id] = {
      ...saslOverrides(plain, sasl),
      'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
      'delegation.token.master.key': 'cluster-token-secret',
      'delegation.token.max.lifetime.ms': 3_600_000,
      'delegation.token.expiry.time.ms': 600_000,
    };
  }
  cluster = await startCluster({ brokerOverrides });
});

after(async () => {
  await cluster?.stop();
});

/** alice over SASL/PLAIN on broker `id`: tokens are only managed over an authenticated connection. */
function alice(id: number): Promise<WireClient> {
  return saslClient(saslPorts[id]!, 'alice', ACL_USERS.alice);
}

/** Whether broker `id` accepts SCRAM with tokenauth=true for the token. */
async function tokenLogin(id: number, tokenId: string, hmac: Buffer): Promise<boolean> {
  const client = await WireClient.connect('127.0.0.1', saslPorts[id]!);
  const versions: Record<number, number> = { [ApiKey.SASL_HANDSHAKE]: 1, [ApiKey.SASL_AUTHENTICATE]: 2 };
  try {
    await authenticate((apiKey, body) => client.call(apiKey, versions[apiKey]!, body), {
      mechanism: 'scram-sha-512',
      username: tokenId,
      password: hmac.toString('base64'),
      tokenauth: true,
    });
  } catch (err) {
    if (/SASL_AUTHENTICATION_FAILED/.test(String(err))) return false;
    throw err;
  } finally {
    client.close();
  }
  return true;
}

/** Milliseconds until every one of `ids` answers tokenLogin with `accepted`. */
async function untilLogin(
  ids: number[],
  tokenId: string,
  hmac: Buffer,
  accepted: boolean,
  timeoutMs = 20_000,
): Promise<number> {
  const started = Date.now();
  const pending = new Set(ids);
  for (;;) {
    for (const id of [...pending]) if ((await tokenLogin(id, tokenId, hmac)) === accepted) pending.delete(id);
    if (pending.size === 0) return Date.now() - started;
    assert.ok(
      Date.now() - started < timeoutMs,
      `brokers ${[...pending]} still ${accepted ? 'refuse' : 'accept'} token ${tokenId}`,
    );
    await sleep(50);
  }
}

async function createToken(id: number): Promise<{ tokenId: string; hmac: Buffer; maxTimestampMs: bigint }> {
  const client = await alice(id);
  try {
    const created = await client.call(ApiKey.CREATE_DELEGATION_TOKEN, 3, {
      ownerPrincipalType: null,
      ownerPrincipalName: null,
      renewers: [],
      maxLifetimeMs: -1n,
    });
    assert.equal(created.errorCode, ErrorCode.NONE);
    return created;
  } finally {
    client.close();
  }
}

/** The expiry broker `id` knows for the token, -1 when it lists no such token. */
async function expiryOn(id: number, tokenId: string): Promise<bigint> {
  const client = await alice(id);
  try {
    const described = await client.call(ApiKey.DESCRIBE_DELEGATION_TOKEN, 3, { owners: null });
    assert.equal(described.errorCode, ErrorCode.NONE);
    const token = described.tokens.find((t: { tokenId: string }) => t.tokenId === tokenId);
    return token === undefined ? -1n : (token.expiryTimestamp as bigint);
  } finally {
    client.close();
  }
}

async function call(id: number, apiKey: number, body: Record<string, unknown>) {
  const client = await alice(id);
  try {
    return await client.call(apiKey, 2, body);
  } finally {
    client.close();
  }
}

describe('delegation tokens across brokers', () => {
  it('a token created through one broker authenticates on the others; renewal applies everywhere', async (t) => {
    const token = await createToken(0);
    assert.equal(await tokenLogin(0, token.tokenId, token.hmac), true);
    const propagationMs = await untilLogin([1, 2], token.tokenId, token.hmac, true);
    t.diagnostic(`token accepted by brokers 1 and 2 ${propagationMs} ms after its creation`);

    const renewed = await call(1, ApiKey.RENEW_DELEGATION_TOKEN, {
      hmac: token.hmac,
      renewPeriodMs: 7_200_000n,
    });
    assert.equal(renewed.errorCode, ErrorCode.NONE);
    // Never past the maximum lifetime, which is above the 600 s expiry period the token was created with.
    assert.equal(renewed.expiryTimestampMs, token.maxTimestampMs);
    for (const id of [0, 2]) {
      const deadline = Date.now() + 20_000;
      while ((await expiryOn(id, token.tokenId)) !== token.maxTimestampMs) {
        assert.ok(Date.now() < deadline, `broker ${id} did not learn the renewal`);
        await sleep(50);
      }
    }

    // Expired at once through broker 2: every broker refuses it, and none can renew it any more.
    const expired = await call(2, ApiKey.EXPIRE_DELEGATION_TOKEN, {
      hmac: token.hmac,
      expiryTimePeriodMs: -1n,
    });
    assert.equal(expired.errorCode, ErrorCode.NONE);
    await untilLogin(BROKERS, token.tokenId, token.hmac, false);
    for (const id of BROKERS) {
      assert.equal(await expiryOn(id, token.tokenId), -1n);
      const again = await call(id, ApiKey.RENEW_DELEGATION_TOKEN, {
        hmac: token.hmac,
        renewPeriodMs: 1_000n,
      });
      assert.equal(again.errorCode, ErrorCode.DELEGATION_TOKEN_NOT_FOUND);
    }
  });

  it('a token whose expiry period, shortened through one broker, has passed is refused by every broker', async () => {
    const token = await createToken(1);
    await untilLogin(BROKERS, token.tokenId, token.hmac, true);
    // Expire in 3 s rather than at once: each broker then refuses it by its own clock, the token still stored.
    const expired = await call(0, ApiKey.EXPIRE_DELEGATION_TOKEN, {
      hmac: token.hmac,
      expiryTimePeriodMs: 3_000n,
    });
    assert.equal(expired.errorCode, ErrorCode.NONE);
    // Every broker must have learnt the new expiry from the notification: one that had not would go on accepting
    // the token for its original 600 s.
    const wait = Number(expired.expiryTimestampMs) - Date.now();
    if (wait > 0) await sleep(wait + 100);
    await untilLogin(BROKERS, token.tokenId, token.hmac, false);
    for (const id of BROKERS) {
      const renewed = await call(id, ApiKey.RENEW_DELEGATION_TOKEN, {
        hmac: token.hmac,
        renewPeriodMs: 1_000n,
      });
      assert.ok(
        [ErrorCode.DELEGATION_TOKEN_EXPIRED, ErrorCode.DELEGATION_TOKEN_NOT_FOUND].includes(
          renewed.errorCode,
        ),
        `broker ${id} renewed an expired token: ${renewed.errorCode}`,
      );
    }
  });
});
