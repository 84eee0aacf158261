// SASL/OAUTHBEARER through the wire. One broker with two OAUTHBEARER listeners: DEV runs Kafka's unsecured JWS
// validator, SIGNED checks JWTs against the JWKS of a test authorization server (issuer, audience, expiry,
// signature). Real clients: kcat (librdkafka's unsecured JWT), confluent-kafka-python (librdkafka with a signed
// token), kafka-python and kafkajs with token providers, Brook's client with the client credentials grant and
// `brook topics` with --command-config. Negative
// cases each answered as Kafka does (an invalid_token challenge, then SASL_AUTHENTICATION_FAILED, then close), and
// tokens naming unknown key ids do not make the broker fetch the JWKS more than once per cooldown.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { Admin } from '../../src/client/admin.js';
import { clientCredentialsTokenProvider, unsecuredToken } from '../../src/client/oauth-token.js';
import { oauthBearerClientFirst } from '../../src/client/sasl.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { OAuthServer } from '../helpers/oauth-server.js';
import { WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';

const dir = mkdtempSync(join(tmpdir(), 'brook-oauth-'));
const OAUTH_JAAS = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;';
const VALIDATOR = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler';
let oauth: OAuthServer;
let broker: BrokerProcess;
let plainPort: number;
let devPort: number;
let signedPort: number;

function kcat(port: number, args: string[], input?: string) {
  return run('kcat', ['-b', `127.0.0.1:${port}`, ...args], { input, timeoutMs: 20_000 });
}

/** SaslHandshake then one OAUTHBEARER token on the SIGNED (or another) listener: the first answer. */
async function presentToken(port: number, token: string) {
  const client = await WireClient.connect('127.0.0.1', port);
  const handshake = await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'OAUTHBEARER' });
  assert.equal(handshake.errorCode, ErrorCode.NONE);
  const first = await client.call(ApiKey.SASL_AUTHENTICATE, 2, { authBytes: oauthBearerClientFirst(token) });
  return { client, first };
}

/** A token the broker must refuse: an invalid_token challenge, then SASL_AUTHENTICATION_FAILED, then close. */
async function assertRefused(port: number, token: string): Promise<void> {
  const { client, first } = await presentToken(port, token);
  assert.equal(first.errorCode, ErrorCode.NONE);
  assert.equal(first.authBytes.toString(), '{"status":"invalid_token"}');
  const second = await client.call(ApiKey.SASL_AUTHENTICATE, 2, { authBytes: Buffer.from([1]) });
  assert.equal(second.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
  assert.equal(second.errorMessage, '{"status":"invalid_token"}');
  assert.equal(await client.raw.waitClosed(), true);
}

before(async () => {
  oauth = await OAuthServer.start({ clients: { 'svc-orders': 'orders-secret' } });
  [plainPort, devPort, signedPort] = [await freePort(), await freePort(), await freePort()];
  broker = await startBroker({
    port: plainPort,
    overrides: {
      listeners: `PLAINTEXT://127.0.0.1:${plainPort},DEV://127.0.0.1:${devPort},SIGNED://127.0.0.1:${signedPort}`,
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,DEV:SASL_PLAINTEXT,SIGNED:SASL_PLAINTEXT',
      'inter.broker.listener.name': 'PLAINTEXT',
      'sasl.enabled.mechanisms': 'OAUTHBEARER',
      'listener.name.dev.oauthbearer.sasl.jaas.config': OAUTH_JAAS,
      'listener.name.signed.oauthbearer.sasl.jaas.config': OAUTH_JAAS,
      'listener.name.signed.oauthbearer.sasl.server.callback.handler.class': VALIDATOR,
      'listener.name.signed.oauthbearer.sasl.oauthbearer.jwks.endpoint.url': `${oauth.url}/jwks`,
      'sasl.oauthbearer.expected.audience': oauth.audience,
      'sasl.oauthbearer.expected.issuer': oauth.issuer,
      'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms': '60000',
    },
  });
});

after(async () => {
  await broker?.stop();
  await oauth?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('OAUTHBEARER with real clients', () => {
  it("kcat produces and consumes with librdkafka's unsecured JWT on the development listener", async () => {
    const args = [
      '-X',
      'security.protocol=sasl_plaintext',
      '-X',
      'sasl.mechanism=OAUTHBEARER',
      '-X',
      'enable.sasl.oauthbearer.unsecure.jwt=true',
      '-X',
      'sasl.oauthbearer.config=principal=alice',
    ];
    const produced = await kcat(devPort, [...args, '-t', 'oauth-kcat', '-P'], 'a\nb\n');
    assert.equal(produced.code, 0, produced.stderr);
    const consumed = await kcat(devPort, [...args, '-t', 'oauth-kcat', '-C', '-e', '-o', 'beginning']);
    assert.equal(consumed.code, 0, consumed.stderr);
    assert.deepEqual(consumed.stdout.trim().split('\n'), ['a', 'b']);
    assert.match(broker.log(), /OAUTHBEARER accepts unsecured/);
  });

  it('confluent-kafka-python (librdkafka) produces with a signed token from its oauth_cb', async () => {
    // The Debian kcat's librdkafka is built without OIDC, so librdkafka gets its signed token from a callback.
    const script = [
      'import sys, time',
      'from confluent_kafka import Producer',
      'token = sys.argv[2]',
      'p = Producer({"bootstrap.servers": sys.argv[1], "security.protocol": "SASL_PLAINTEXT",',
      '  "sasl.mechanism": "OAUTHBEARER", "oauth_cb": lambda config: (token, time.time() + 600)})',
      'errors = []',
      'p.produce("oauth-python", b"py", on_delivery=lambda e, m: errors.append(e))',
      'p.flush(15)',
      'print("delivered" if errors == [None] else "failed %r" % errors)',
    ].join('\n');
    const token = await oauth.sign({ sub: 'svc-python' });
    const result = await run('/usr/bin/python3', ['-c', script, `127.0.0.1:${signedPort}`, token]);
    assert.equal(result.stdout.trim(), 'delivered', result.stderr);
  });

  it('kafka-python lists topics with a signed token from its token provider', async () => {
    const script = [
      'import sys',
      'from kafka import KafkaAdminClient',
      'class Provider:',
      '    def token(self): return sys.argv[2]',
      'admin = KafkaAdminClient(bootstrap_servers=sys.argv[1], security_protocol="SASL_PLAINTEXT",',
      '  sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=Provider())',
      'print(",".join(sorted(admin.list_topics())))',
      'admin.close()',
    ].join('\n');
    const token = await oauth.sign({ sub: 'svc-kafka-python' });
    const result = await run('/usr/bin/python3', ['-c', script, `127.0.0.1:${signedPort}`, token]);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(result.stdout.trim().split(',').includes('oauth-python'), result.stdout);
  });

  it("Brook's client authenticates with the client credentials grant, and the token is reused", async () => {
    const requestsBefore = oauth.tokenRequests;
    const token = clientCredentialsTokenProvider({
      tokenEndpointUrl: `${oauth.url}/token`,
      clientId: 'svc-orders',
      clientSecret: 'orders-secret',
    });
    const admin = new Admin({
      bootstrapServers: `127.0.0.1:${signedPort}`,
      sasl: { mechanism: 'oauthbearer', token },
    });
    try {
      await admin.createTopics([{ topic: 'oauth-brook', numPartitions: 1, replicationFactor: 1 }]);
      assert.ok((await admin.listTopics()).includes('oauth-brook'));
    } finally {
      await admin.close();
    }
    assert.equal(oauth.tokenRequests - requestsBefore, 1);
  });

  it('kafkajs authenticates with an oauthBearerProvider token', async () => {
    const kafka = new Kafka({
      brokers: [`127.0.0.1:${signedPort}`],
      logLevel: logLevel.NOTHING,
      sasl: {
        mechanism: 'oauthbearer',
        oauthBearerProvider: async () => ({ value: await oauth.sign({ sub: 'svc-kafkajs' }) }),
      },
    });
    const admin = kafka.admin();
    await admin.connect();
    try {
      assert.ok((await admin.listTopics()).includes('oauth-brook'));
    } finally {
      await admin.disconnect();
    }
  });

  it('brook topics takes OAUTHBEARER from --command-config (token endpoint, and an unsecured token)', async () => {
    const signed = join(dir, 'signed.properties');
    writeFileSync(
      signed,
      [
        'security.protocol=SASL_PLAINTEXT',
        'sasl.mechanism=OAUTHBEARER',
        'sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler',
        `sasl.oauthbearer.token.endpoint.url=${oauth.url}/token`,
        'sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="svc-orders" clientSecret="orders-secret";',
      ].join('\n'),
    );
    const dev = join(dir, 'dev.properties');
    writeFileSync(
      dev,
      [
        'security.protocol=SASL_PLAINTEXT',
        'sasl.mechanism=OAUTHBEARER',
        'sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="alice";',
      ].join('\n'),
    );
    for (const [port, config] of [
      [signedPort, signed],
      [devPort, dev],
    ] as const) {
      const listed = await run(process.execPath, [
        join(import.meta.dirname, '../../../bin/brook'),
        'topics',
        '--bootstrap-server',
        `127.0.0.1:${port}`,
        '--command-config',
        config,
        '--list',
      ]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.ok(listed.stdout.split('\n').includes('oauth-brook'), listed.stdout);
    }
  });
});

describe('OAUTHBEARER refusals on the wire', () => {
  it('an expired token, a bad signature, a wrong audience or issuer, and an unsigned token are refused alike', async () => {
    const now = Math.floor(Date.now() / 1000);
    const refused = [
      await oauth.sign({ sub: 'eve', iat: now - 600, exp: now - 120 }),
      await oauth.sign({ sub: 'eve' }, { key: await OAuthServer.strangerKey() }),
      await oauth.sign({ sub: 'eve', aud: 'someone-else' }),
      await oauth.sign({ sub: 'eve', iss: 'https://evil.test' }),
      unsecuredToken({ principal: 'eve' }),
    ];
    for (const token of refused) await assertRefused(signedPort, token);
    // The broker logs why; the client learned nothing but invalid_token.
    assert.match(broker.log(), /OAUTHBEARER token rejected.*exp/);
    assert.match(broker.log(), /OAUTHBEARER token rejected.*signature verification failed/);
  });

  it('the unsecured validator refuses an expired token and one with a signature', async () => {
    await assertRefused(devPort, unsecuredToken({ principal: 'eve', lifetimeMs: -60_000 }));
    await assertRefused(devPort, `${unsecuredToken({ principal: 'eve' })}c2ln`);
  });

  it('a malformed client message is SASL_AUTHENTICATION_FAILED and closes the connection', async () => {
    const client = await WireClient.connect('127.0.0.1', signedPort);
    await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'OAUTHBEARER' });
    const answer = await client.call(ApiKey.SASL_AUTHENTICATE, 2, {
      authBytes: Buffer.from('n,,auth=Basic x'),
    });
    assert.equal(answer.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    assert.equal(await client.raw.waitClosed(), true);
  });

  it('tokens naming unknown key ids make the broker fetch the JWKS at most once per cooldown', async () => {
    // The listener has fetched the JWKS already (the tests above); within the 60 s cooldown at most one more.
    const before = oauth.jwksFetches;
    const stranger = await OAuthServer.strangerKey();
    for (let i = 0; i < 20; i++) {
      await assertRefused(
        signedPort,
        await oauth.sign({ sub: 'eve' }, { kid: `unknown-${i}`, key: stranger }),
      );
    }
    assert.ok(oauth.jwksFetches - before <= 1, `${oauth.jwksFetches - before} JWKS fetches`);
  });

  it('a valid token still authenticates after the refusals, for as long as the token lasts', async () => {
    const { client, first } = await presentToken(signedPort, await oauth.sign({ sub: 'svc-check' }));
    try {
      assert.equal(first.errorCode, ErrorCode.NONE);
      assert.equal(first.authBytes.length, 0);
      // No connections.max.reauth.ms here: the session lasts as long as the token (600 s).
      const lifetime = Number(first.sessionLifetimeMs);
      assert.ok(lifetime > 590_000 && lifetime <= 600_000, `${lifetime}`);
      const metadata = await client.call(ApiKey.METADATA, 1, { topics: [] });
      assert.equal(metadata.brokers.length, 1);
    } finally {
      client.close();
    }
  });
});

describe('OAUTHBEARER startup errors', () => {
  it('the validator handler without a JWKS URL stops startup naming the key', async () => {
    const port = await freePort();
    await assert.rejects(
      startBroker({
        overrides: {
          listeners: `SASL_PLAINTEXT://127.0.0.1:${port}`,
          'security.inter.broker.protocol': 'SASL_PLAINTEXT',
          'sasl.enabled.mechanisms': 'OAUTHBEARER',
          'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': OAUTH_JAAS,
          'listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class': VALIDATOR,
        },
      }),
      /sasl\.oauthbearer\.jwks\.endpoint\.url/,
    );
  });
});
