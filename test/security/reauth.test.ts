// KIP-368 re-authentication through the wire: a SASL_PLAINTEXT listener with connections.max.reauth.ms=1500
// (1300 for OAUTHBEARER, by its per-mechanism key) answers that session lifetime (or a shorter OAUTHBEARER
// token's), closes a connection that sends a request after its session ended, and lets it re-authenticate on the
// same connection first, with the same mechanism and principal only. Brook's client re-authenticates by itself
// and keeps one connection across several lifetimes, and so does a broker's connection to another broker (the same Connection with fixed SASL versions). As Kafka, a
// re-authentication may begin at most once a second.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel } from 'kafkajs';
import { InterBrokerConnection } from '../../src/broker/cluster/inter-broker-connection.js';
import { Connection } from '../../src/client/connection.js';
import { unsecuredToken, unsecuredTokenProvider } from '../../src/client/oauth-token.js';
import { resolveClientOptions, type SaslOptions } from '../../src/client/options.js';
import { oauthBearerClientFirst } from '../../src/client/sasl.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';

const REAUTH_MS = 1500;
/**
 * listener.name.sasl_plaintext.oauthbearer.connections.max.reauth.ms: OAUTHBEARER sessions get their own. Clients
 * re-authenticate at 85-95% of it, still more than the second Kafka (and Brook) requires between two.
 */
const OAUTHBEARER_REAUTH_MS = 1300;
const JAAS =
  'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret";';
let broker: BrokerProcess;
let saslPort: number;

/** PLAIN authentication on a new connection; returns it with the SaslAuthenticate v1 answer. */
async function authenticated(user = 'alice', password = `${user}-secret`) {
  const client = await WireClient.connect('127.0.0.1', saslPort);
  const handshake = await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'PLAIN' });
  assert.equal(handshake.errorCode, ErrorCode.NONE);
  const answer = await client.call(ApiKey.SASL_AUTHENTICATE, 1, {
    authBytes: Buffer.from(`\0${user}\0${password}`),
  });
  assert.equal(answer.errorCode, ErrorCode.NONE);
  return { client, answer };
}

async function reauthenticate(client: WireClient, mechanism: string, token: Buffer) {
  const handshake = await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism });
  assert.equal(handshake.errorCode, ErrorCode.NONE);
  return client.call(ApiKey.SASL_AUTHENTICATE, 1, { authBytes: token });
}

before(async () => {
  const plainPort = await freePort();
  saslPort = await freePort();
  broker = await startBroker({
    port: plainPort,
    overrides: {
      listeners: `PLAINTEXT://127.0.0.1:${plainPort},SASL_PLAINTEXT://127.0.0.1:${saslPort}`,
      'inter.broker.listener.name': 'PLAINTEXT',
      'sasl.enabled.mechanisms': 'PLAIN,OAUTHBEARER',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
      'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config':
        'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;',
      'listener.name.sasl_plaintext.connections.max.reauth.ms': String(REAUTH_MS),
      'listener.name.sasl_plaintext.oauthbearer.connections.max.reauth.ms': String(OAUTHBEARER_REAUTH_MS),
    },
  });
});

after(async () => {
  await broker?.stop();
});

describe('KIP-368 re-authentication', () => {
  it('SaslAuthenticate v1 answers connections.max.reauth.ms as the session lifetime', async () => {
    const { client, answer } = await authenticated();
    client.close();
    assert.equal(answer.sessionLifetimeMs, BigInt(REAUTH_MS));
  });

  it("a mechanism's own connections.max.reauth.ms gives its sessions their lifetime", async () => {
    const client = await WireClient.connect('127.0.0.1', saslPort);
    try {
      await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'OAUTHBEARER' });
      const token = unsecuredToken({ principal: 'alice', lifetimeMs: 3_600_000 });
      const answer = await client.call(ApiKey.SASL_AUTHENTICATE, 1, {
        authBytes: oauthBearerClientFirst(token),
      });
      assert.equal(answer.errorCode, ErrorCode.NONE);
      assert.equal(answer.sessionLifetimeMs, BigInt(OAUTHBEARER_REAUTH_MS));
    } finally {
      client.close();
    }
  });

  it('an OAUTHBEARER token that expires sooner shortens the session to its expiry', async () => {
    const client = await WireClient.connect('127.0.0.1', saslPort);
    try {
      await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'OAUTHBEARER' });
      const token = unsecuredToken({ principal: 'alice', lifetimeMs: 800 });
      const answer = await client.call(ApiKey.SASL_AUTHENTICATE, 1, {
        authBytes: oauthBearerClientFirst(token),
      });
      assert.equal(answer.errorCode, ErrorCode.NONE);
      const lifetime = Number(answer.sessionLifetimeMs);
      assert.ok(lifetime > 0 && lifetime <= 800, `${lifetime}`);
    } finally {
      client.close();
    }
  });

  it('a request after the session ended closes the connection without an answer', async () => {
    const { client } = await authenticated();
    const metadata = await client.call(ApiKey.METADATA, 1, { topics: [] });
    assert.equal(metadata.brokers.length, 1);
    await sleep(REAUTH_MS + 300);
    client.send(ApiKey.METADATA, 1, { topics: [] });
    await assert.rejects(client.receive(3000), /closed/);
    await waitUntil(
      () => /SASL session expired without re-authentication/.test(broker.log()),
      5000,
      () => broker.log(),
    );
  });

  it('re-authenticating before the end extends the session on the same connection', async () => {
    const { client } = await authenticated();
    try {
      await sleep(REAUTH_MS / 2);
      const again = await reauthenticate(client, 'PLAIN', Buffer.from('\0alice\0alice-secret'));
      assert.equal(again.errorCode, ErrorCode.NONE);
      assert.equal(again.sessionLifetimeMs, BigInt(REAUTH_MS));
      await sleep(REAUTH_MS / 2 + 300); // past the first session's end, inside the second
      const metadata = await client.call(ApiKey.METADATA, 1, { topics: [] });
      assert.equal(metadata.brokers.length, 1);
    } finally {
      client.close();
    }
  });

  it('a token over sasl.server.max.receive.size during re-authentication closes the connection unread', async () => {
    // Kafka's authenticator reads the frames of a re-authentication itself, with the SASL bound as at first.
    const { client } = await authenticated();
    try {
      const handshake = await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'PLAIN' });
      assert.equal(handshake.errorCode, ErrorCode.NONE);
      client.send(ApiKey.SASL_AUTHENTICATE, 1, { authBytes: Buffer.alloc(600_000, 1) });
      await assert.rejects(client.receive(5000), /closed|ECONNRESET/);
      await waitUntil(
        () => /exceeds sasl\.server\.max\.receive\.size 524288/.test(broker.log()),
        5000,
        () => broker.log(),
      );
    } finally {
      client.close();
    }
  });

  it('a re-authentication within a second of the last one began is refused ILLEGAL_SASL_STATE, the connection kept', async () => {
    const { client } = await authenticated();
    try {
      // The first re-authentication may follow the authentication at once, as in Kafka.
      const first = await reauthenticate(client, 'PLAIN', Buffer.from('\0alice\0alice-secret'));
      assert.equal(first.errorCode, ErrorCode.NONE);
      const tooSoon = await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'PLAIN' });
      assert.equal(tooSoon.errorCode, ErrorCode.ILLEGAL_SASL_STATE);
      const metadata = await client.call(ApiKey.METADATA, 1, { topics: [] });
      assert.equal(metadata.brokers.length, 1);
      await sleep(1100);
      const later = await reauthenticate(client, 'PLAIN', Buffer.from('\0alice\0alice-secret'));
      assert.equal(later.errorCode, ErrorCode.NONE);
      assert.equal(later.sessionLifetimeMs, BigInt(REAUTH_MS));
    } finally {
      client.close();
    }
  });

  it('re-authenticating as another principal fails and closes the connection', async () => {
    const { client } = await authenticated();
    const again = await reauthenticate(client, 'PLAIN', Buffer.from('\0bob\0bob-secret'));
    assert.equal(again.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    assert.equal(
      again.errorMessage,
      'Cannot change principals during re-authentication from User.alice: User.bob',
    );
    assert.equal(await client.raw.waitClosed(), true);
  });

  it('re-authenticating with another mechanism fails at SaslAuthenticate and closes the connection', async () => {
    const { client } = await authenticated();
    const again = await reauthenticate(
      client,
      'OAUTHBEARER',
      oauthBearerClientFirst(unsecuredToken({ principal: 'alice' })),
    );
    assert.equal(again.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    assert.match(again.errorMessage, /not supported for re-authentication of mechanism 'PLAIN'/);
    assert.equal(await client.raw.waitClosed(), true);
  });

  it('a wrong password at re-authentication fails and closes the connection', async () => {
    const { client } = await authenticated();
    const again = await reauthenticate(client, 'PLAIN', Buffer.from('\0alice\0wrong'));
    assert.equal(again.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    assert.equal(await client.raw.waitClosed(), true);
  });

  for (const sasl of [
    { mechanism: 'plain', username: 'alice', password: 'alice-secret' },
    { mechanism: 'oauthbearer', token: unsecuredTokenProvider({ principal: 'alice' }) },
  ] satisfies SaslOptions[]) {
    it(`Brook's client re-authenticates by itself with ${sasl.mechanism} and keeps its connection`, async () => {
      const options = resolveClientOptions({ bootstrapServers: `127.0.0.1:${saslPort}`, sasl });
      const connection = await Connection.connect('127.0.0.1', saslPort, options);
      try {
        // Three session lifetimes of requests, pipelined in pairs, on one connection.
        const until = Date.now() + 3 * REAUTH_MS;
        let served = 0;
        while (Date.now() < until) {
          const answers = await Promise.all([
            connection.request<{ brokers: unknown[] }>(ApiKey.METADATA, { topics: [] }, { version: 1 }),
            connection.request<{ brokers: unknown[] }>(ApiKey.METADATA, { topics: [] }, { version: 1 }),
          ]);
          served += answers.filter((a) => a.brokers.length === 1).length;
          await sleep(100);
        }
        assert.equal(connection.isOpen, true);
        assert.ok(served >= 10, `${served}`);
      } finally {
        connection.close();
      }
    });
  }

  it("a broker's inter-broker connection re-authenticates by itself and keeps being served", async () => {
    const connection = new InterBrokerConnection('127.0.0.1', saslPort, 'broker-9-test', {
      tls: null,
      sasl: { mechanism: 'plain', username: 'alice', password: 'alice-secret' },
    });
    try {
      // Three session lifetimes of requests: one sent after the session ended would close the connection, and the
      // requests on it would fail.
      const until = Date.now() + 3 * REAUTH_MS;
      let served = 0;
      while (Date.now() < until) {
        const answers = await Promise.all([
          connection.request<{ brokers: unknown[] }>(ApiKey.METADATA, 1, { topics: [] }, 15_000),
          connection.request<{ brokers: unknown[] }>(ApiKey.METADATA, 1, { topics: [] }, 15_000),
        ]);
        served += answers.filter((a) => a.brokers.length === 1).length;
        await sleep(100);
      }
      assert.ok(served >= 10, `${served}`);
    } finally {
      connection.close();
    }
  });

  it('kafkajs re-authenticates before its session ends and keeps being served', async () => {
    const kafka = new Kafka({
      brokers: [`127.0.0.1:${saslPort}`],
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
      // kafkajs re-authenticates once the session has less than this left: 1050 ms into a 1500 ms session, so
      // re-authentications begin more than a second apart, as Kafka requires.
      reauthenticationThreshold: 450,
      sasl: { mechanism: 'plain', username: 'alice', password: 'alice-secret' },
    });
    const admin = kafka.admin();
    await admin.connect();
    try {
      const until = Date.now() + 3 * REAUTH_MS;
      while (Date.now() < until) {
        await admin.listTopics();
        await sleep(200);
      }
    } finally {
      await admin.disconnect();
    }
    assert.doesNotMatch(
      broker.log(),
      /principal":"User:alice".*session expired|session expired.*User:alice.*kafkajs/,
    );
  });
});
