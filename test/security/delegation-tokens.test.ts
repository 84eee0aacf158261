// Delegation tokens (KIP-48) through the wire, against a broker process with the ACL authorizer on and SASL/PLAIN
// users alice, bob and carol: Create/Renew/Expire/Describe with Kafka's rules and errors (not over PLAINTEXT, not
// over a token-authenticated connection, owner and renewers only, CREATE_TOKENS for another owner, DESCRIBE on the
// token or DESCRIBE_TOKENS on its owner to see others' tokens), and SASL/SCRAM with tokenauth=true authenticating
// as the token's owner.

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { authenticate } from '../../src/client/sasl.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { AclOperation, ResourceType } from '../../src/security/authorizer/acl-types.js';
import { type AclBroker, addAcls, startAclBroker } from '../helpers/acl-broker.js';
import { run } from '../helpers/broker-process.js';
import { WireClient } from '../helpers/wire-client.js';

const SECRET = 'cluster-token-secret';
let acl: AclBroker;

before(async () => {
  acl = await startAclBroker({
    extra: {
      'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
      'delegation.token.master.key': SECRET,
      'delegation.token.max.lifetime.ms': 3_600_000,
      'delegation.token.expiry.time.ms': 600_000,
    },
  });
});

after(async () => {
  await acl?.broker.stop();
});

async function create(
  client: WireClient,
  version: number,
  body: { renewers?: string[]; owner?: string; maxLifetimeMs?: bigint } = {},
) {
  const [ownerType, ownerName] = body.owner?.split(':') ?? [null, null];
  return client.call(ApiKey.CREATE_DELEGATION_TOKEN, version, {
    ownerPrincipalType: ownerType,
    ownerPrincipalName: ownerName,
    renewers: (body.renewers ?? []).map((r) => {
      const [principalType, principalName] = r.split(':');
      return { principalType, principalName };
    }),
    maxLifetimeMs: body.maxLifetimeMs ?? -1n,
  });
}

async function describeTokens(client: WireClient, owners: string[] | null, version = 3) {
  const response = await client.call(ApiKey.DESCRIBE_DELEGATION_TOKEN, version, {
    owners:
      owners?.map((o) => {
        const [principalType, principalName] = o.split(':');
        return { principalType, principalName };
      }) ?? null,
  });
  return response;
}

/** A SASL_PLAINTEXT connection authenticated with SCRAM and the token (tokenauth=true). */
async function withToken(tokenId: string, hmac: Buffer, mechanism: 'scram-sha-256' | 'scram-sha-512') {
  const client = await WireClient.connect('127.0.0.1', acl.saslPort);
  const versions = { [ApiKey.SASL_HANDSHAKE]: 1, [ApiKey.SASL_AUTHENTICATE]: 2 } as Record<number, number>;
  try {
    const session = await authenticate((apiKey, body) => client.call(apiKey, versions[apiKey]!, body), {
      mechanism,
      username: tokenId,
      password: hmac.toString('base64'),
      tokenauth: true,
    });
    return { client, session };
  } catch (err) {
    client.close();
    throw err;
  }
}

describe('delegation token APIs', () => {
  it('refuses token requests over PLAINTEXT', async () => {
    const admin = await acl.admin();
    try {
      const created = await create(admin, 1);
      assert.equal(created.errorCode, ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
      assert.equal(created.principalName, 'ANONYMOUS');
      assert.equal(created.tokenId, '');
      const described = await describeTokens(admin, null);
      assert.equal(described.errorCode, ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
      const renewed = await admin.call(ApiKey.RENEW_DELEGATION_TOKEN, 2, {
        hmac: Buffer.alloc(64),
        renewPeriodMs: 1n,
      });
      assert.equal(renewed.errorCode, ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
    } finally {
      admin.close();
    }
  });

  it('creates, renews, describes and expires a token with Kafka rules, in every version', async () => {
    const alice = await acl.as('alice');
    const bob = await acl.as('bob');
    const carol = await acl.as('carol');
    try {
      for (const version of [0, 1, 2, 3]) {
        const created = await create(alice, version, { renewers: ['User:bob'] });
        assert.equal(created.errorCode, ErrorCode.NONE);
        assert.equal(created.principalType, 'User');
        assert.equal(created.principalName, 'alice');
        if (version >= 3) assert.equal(created.tokenRequesterPrincipalName, 'alice');
        assert.deepEqual(created.hmac, createHmac('sha512', SECRET).update(created.tokenId).digest());
        assert.equal(created.expiryTimestampMs - created.issueTimestampMs, 600_000n);
        assert.equal(created.maxTimestampMs - created.issueTimestampMs, 3_600_000n);

        const mismatch = await carol.call(ApiKey.RENEW_DELEGATION_TOKEN, Math.min(version, 2), {
          hmac: created.hmac,
          renewPeriodMs: 1_000n,
        });
        assert.deepEqual(
          [mismatch.errorCode, mismatch.expiryTimestampMs],
          [ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH, -1n],
        );
        const renewed = await bob.call(ApiKey.RENEW_DELEGATION_TOKEN, Math.min(version, 2), {
          hmac: created.hmac,
          renewPeriodMs: 7_200_000n,
        });
        assert.equal(renewed.errorCode, ErrorCode.NONE);
        assert.equal(renewed.expiryTimestampMs, created.maxTimestampMs, 'never past the maximum lifetime');

        const mine = await describeTokens(alice, null, version);
        const listed = mine.tokens.find((t: { tokenId: string }) => t.tokenId === created.tokenId);
        assert.ok(listed, 'the owner sees the token');
        assert.deepEqual(listed.hmac, created.hmac);
        assert.deepEqual(listed.renewers, [{ principalType: 'User', principalName: 'bob' }]);
        assert.equal(listed.expiryTimestamp, created.maxTimestampMs);
        const asRenewer = await describeTokens(bob, ['User:alice'], version);
        assert.ok(asRenewer.tokens.some((t: { tokenId: string }) => t.tokenId === created.tokenId));
        assert.deepEqual((await describeTokens(carol, null, version)).tokens, []);
        assert.deepEqual((await describeTokens(alice, [], version)).tokens, []);

        const expired = await alice.call(ApiKey.EXPIRE_DELEGATION_TOKEN, Math.min(version, 2), {
          hmac: created.hmac,
          expiryTimePeriodMs: -1n,
        });
        assert.equal(expired.errorCode, ErrorCode.NONE);
        const gone = await bob.call(ApiKey.RENEW_DELEGATION_TOKEN, Math.min(version, 2), {
          hmac: created.hmac,
          renewPeriodMs: 1_000n,
        });
        assert.equal(gone.errorCode, ErrorCode.DELEGATION_TOKEN_NOT_FOUND);
      }
    } finally {
      for (const c of [alice, bob, carol]) c.close();
    }
  });

  it('checks renewer types, another owner (CREATE_TOKENS) and others tokens (DESCRIBE, DESCRIBE_TOKENS)', async () => {
    const admin = await acl.admin();
    const alice = await acl.as('alice');
    const carol = await acl.as('carol');
    try {
      const badRenewer = await create(alice, 3, { renewers: ['Group:ops'] });
      assert.equal(badRenewer.errorCode, ErrorCode.INVALID_PRINCIPAL_TYPE);

      const refused = await create(carol, 3, { owner: 'User:bob' });
      assert.equal(refused.errorCode, ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED);
      assert.deepEqual([refused.principalName, refused.tokenRequesterPrincipalName], ['bob', 'carol']);
      await addAcls(admin, [
        {
          resourceType: ResourceType.USER,
          resourceName: 'User:bob',
          principal: 'User:carol',
          operation: AclOperation.CREATE_TOKENS,
        },
      ]);
      const forBob = await create(carol, 3, { owner: 'User:bob' });
      assert.equal(forBob.errorCode, ErrorCode.NONE);
      assert.deepEqual([forBob.principalName, forBob.tokenRequesterPrincipalName], ['bob', 'carol']);
      // The requester may describe it (KIP-373), but renewing is for owner and renewers only.
      assert.ok(
        (await describeTokens(carol, ['User:bob'])).tokens.some(
          (t: { tokenId: string }) => t.tokenId === forBob.tokenId,
        ),
      );
      const renew = await carol.call(ApiKey.RENEW_DELEGATION_TOKEN, 2, {
        hmac: forBob.hmac,
        renewPeriodMs: 1n,
      });
      assert.equal(renew.errorCode, ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH);

      const alices = await create(alice, 3);
      const seen = async () =>
        (await describeTokens(carol, null)).tokens.some(
          (t: { tokenId: string }) => t.tokenId === alices.tokenId,
        );
      assert.equal(await seen(), false);
      await addAcls(admin, [
        {
          resourceType: ResourceType.DELEGATION_TOKEN,
          resourceName: alices.tokenId,
          principal: 'User:carol',
          operation: AclOperation.DESCRIBE,
        },
      ]);
      assert.equal(await seen(), true, 'DESCRIBE on the token');
      const other = await create(alice, 3);
      const seenOther = async () =>
        (await describeTokens(carol, ['User:alice'])).tokens.some(
          (t: { tokenId: string }) => t.tokenId === other.tokenId,
        );
      assert.equal(await seenOther(), false);
      await addAcls(admin, [
        {
          resourceType: ResourceType.USER,
          resourceName: 'User:alice',
          principal: 'User:carol',
          operation: AclOperation.DESCRIBE_TOKENS,
        },
      ]);
      assert.equal(await seenOther(), true, 'DESCRIBE_TOKENS on the owner');
    } finally {
      for (const c of [admin, alice, carol]) c.close();
    }
  });

  it('SCRAM with tokenauth=true authenticates as the owner, and such a connection may not manage tokens', async () => {
    const alice = await acl.as('alice');
    let created: { tokenId: string; hmac: Buffer; expiryTimestampMs: bigint };
    try {
      created = await create(alice, 2);
      assert.equal((created as { errorCode?: number }).errorCode, ErrorCode.NONE);
    } finally {
      alice.close();
    }
    for (const mechanism of ['scram-sha-256', 'scram-sha-512'] as const) {
      const { client, session } = await withToken(created.tokenId, created.hmac, mechanism);
      try {
        // KIP-368: the session ends when the token does.
        assert.ok(session.sessionLifetimeMs > 0 && session.sessionLifetimeMs <= 600_000);
        // Authenticated as alice: her own tokens are listed, but over a token connection the APIs refuse.
        const described = await describeTokens(client, null);
        assert.equal(described.errorCode, ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
        const again = await create(client, 3);
        assert.equal(again.errorCode, ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
        assert.equal(again.principalName, 'alice');
      } finally {
        client.close();
      }
    }
    // A wrong HMAC, an unknown token id, and the token without tokenauth all fail alike.
    await assert.rejects(
      withToken(created.tokenId, Buffer.alloc(64, 1), 'scram-sha-256'),
      /SASL_AUTHENTICATION_FAILED/,
    );
    await assert.rejects(
      withToken('AAAAAAAAAAAAAAAAAAAAAA', created.hmac, 'scram-sha-256'),
      /SASL_AUTHENTICATION_FAILED/,
    );
    const plainScram = await WireClient.connect('127.0.0.1', acl.saslPort);
    try {
      await assert.rejects(
        authenticate(
          (apiKey, body) => plainScram.call(apiKey, apiKey === ApiKey.SASL_HANDSHAKE ? 1 : 2, body),
          {
            mechanism: 'scram-sha-256',
            username: created.tokenId,
            password: created.hmac.toString('base64'),
          },
        ),
        /SASL_AUTHENTICATION_FAILED/,
      );
    } finally {
      plainScram.close();
    }
  });
});

describe('brook delegation-tokens', () => {
  const dir = mkdtempSync(join(tmpdir(), 'brook-tokens-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  function config(name: string, lines: string[]): string {
    const path = join(dir, `${name}.properties`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    return path;
  }
  const plain = (user: string, password: string) =>
    config(user, [
      'security.protocol=SASL_PLAINTEXT',
      'sasl.mechanism=PLAIN',
      `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="${user}" password="${password}";`,
    ]);
  const brook = (commandConfig: string, ...args: string[]) =>
    run(process.execPath, [
      join(import.meta.dirname, '../../../bin/brook'),
      'delegation-tokens',
      '--bootstrap-server',
      `127.0.0.1:${acl.saslPort}`,
      '--command-config',
      commandConfig,
      ...args,
    ]);

  it('creates, describes, renews and expires with kafka-delegation-tokens flags and output', async () => {
    const alice = plain('alice', 'alice-secret');
    const bob = plain('bob', 'bob-secret');
    const created = await brook(
      alice,
      '--create',
      '--max-life-time-period',
      '-1',
      '--renewer-principal',
      'User:bob',
    );
    assert.equal(created.code, 0, created.stderr);
    const lines = created.stdout.split('\n');
    assert.equal(
      lines[0],
      'Calling create token operation with renewers :[User:bob] , max-life-time-period :-1',
    );
    const tokenId = /^Created delegation token with tokenId : (\S+)$/.exec(lines[1] ?? '')?.[1];
    assert.ok(tokenId, created.stdout);
    assert.equal(lines[2], '');
    assert.match(
      lines[3] ?? '',
      /^TOKENID {9}HMAC {27}OWNER {11}REQUESTER {7}RENEWERS {18}ISSUEDATE {7}EXPIRYDATE {6}MAXDATE/,
    );
    const row = (lines[5] ?? '').split(/\s+/);
    assert.equal(row[0], tokenId);
    const hmac = row[1]!;
    assert.equal(hmac, createHmac('sha512', SECRET).update(tokenId).digest('base64'));
    assert.deepEqual(row.slice(2, 5), ['User:alice', 'User:alice', '[User:bob]']);
    assert.match(row[5]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d$/);

    const described = await brook(bob, '--describe', '--owner-principal', 'User:alice');
    assert.equal(described.code, 0, described.stderr);
    assert.match(
      described.stdout,
      /^Calling describe token operation for owners: \[User:alice\]\nTotal number of tokens : 1\nTOKENID/,
    );
    assert.ok(described.stdout.includes(tokenId));

    const renewed = await brook(bob, '--renew', '--hmac', hmac, '--renew-time-period', '-1');
    assert.equal(renewed.code, 0, renewed.stderr);
    assert.match(renewed.stdout, /Completed renew operation\. New expiry date : \d{4}-\d\d-\d\dT\d\d:\d\d/);

    // Tools authenticate with the token through the ScramLoginModule's tokenauth="true", as Kafka's do; over
    // such a connection token requests are refused.
    const tokenConfig = config('token', [
      'security.protocol=SASL_PLAINTEXT',
      'sasl.mechanism=SCRAM-SHA-512',
      `sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="${tokenId}" password="${hmac}" tokenauth="true";`,
    ]);
    const viaToken = await brook(tokenConfig, '--describe');
    assert.equal(viaToken.code, 1);
    assert.match(viaToken.stderr, /DELEGATION_TOKEN_REQUEST_NOT_ALLOWED/);
    const wrongHmac = config('wrong', [
      'security.protocol=SASL_PLAINTEXT',
      'sasl.mechanism=SCRAM-SHA-512',
      `sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="${tokenId}" password="AAAA" tokenauth="true";`,
    ]);
    const refused = await brook(wrongHmac, '--describe');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /SASL_AUTHENTICATION_FAILED|authentication failed/i);

    const carolExpires = await brook(
      plain('carol', 'carol-secret'),
      '--expire',
      '--hmac',
      hmac,
      '--expiry-time-period',
      '-1',
    );
    assert.equal(carolExpires.code, 1);
    assert.match(carolExpires.stderr, /DELEGATION_TOKEN_OWNER_MISMATCH/);
    const expired = await brook(alice, '--expire', '--hmac', hmac, '--expiry-time-period', '-1');
    assert.equal(expired.code, 0, expired.stderr);
    assert.match(
      expired.stdout,
      /^Calling expire token operation with hmac :\S+ , expire-time-period :-1\nCompleted expire operation\./,
    );
    const remaining = await brook(alice, '--describe');
    assert.match(
      remaining.stdout,
      /^Calling describe token operation for current user\.\nTotal number of tokens : \d+\n/,
    );
    assert.ok(!remaining.stdout.includes(tokenId), 'the expired token is gone');
  });

  it('refuses what kafka-delegation-tokens refuses', async () => {
    const alice = plain('alice', 'alice-secret');
    for (const args of [
      ['--create', '--describe', '--max-life-time-period', '-1'],
      ['--create'],
      ['--renew', '--hmac', 'AAAA'],
      ['--describe', '--hmac', 'AAAA'],
    ]) {
      const result = await brook(alice, ...args);
      assert.equal(result.code, 1, args.join(' '));
      assert.match(result.stderr, /exactly one action|Missing required argument|can't be used with/);
    }
  });
});

describe('delegation tokens disabled', () => {
  it('answers DELEGATION_TOKEN_AUTH_DISABLED without a secret key', async () => {
    const off = await startAclBroker();
    try {
      const alice = await off.as('alice');
      try {
        assert.equal((await create(alice, 3)).errorCode, ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED);
        assert.equal((await describeTokens(alice, null)).errorCode, ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED);
        const expired = await alice.call(ApiKey.EXPIRE_DELEGATION_TOKEN, 2, {
          hmac: Buffer.alloc(64),
          expiryTimePeriodMs: -1n,
        });
        assert.equal(expired.errorCode, ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED);
      } finally {
        alice.close();
      }
    } finally {
      await off.broker.stop();
    }
  });
});
