// SASL settings changed at runtime (KIP-226) over the wire: `listener.name.<l>.sasl.enabled.mechanisms` and the
// broker-wide `sasl.enabled.mechanisms` altered on the broker resource, and the listener's PLAIN users
// (`listener.name.<l>.plain.sasl.jaas.config`, a password config stored encrypted with password.encoder.secret). A new connection sees the new list (a
// mechanism turned off is answered UNSUPPORTED_SASL_MECHANISM with the enabled list, as Kafka does); a connection
// that authenticated before keeps working, as in Kafka; an unsupported mechanism is refused when altered.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { KafkaProtocolError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { waitFor } from '../helpers/cluster.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";';
const TOPIC = 'dynamic-sasl';

let broker: InProcessBroker;
let saslPort: number;
const clients: { close(): Promise<void> }[] = [];

before(async () => {
  const plainPort = await freePort();
  saslPort = await freePort();
  broker = await startInProcessBroker({
    listeners: `PLAINTEXT://127.0.0.1:${plainPort},SASL_PLAINTEXT://127.0.0.1:${saslPort}`,
    'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
    'password.encoder.secret': 'encoder-secret-for-tests',
  });
  const admin = plainAdmin();
  const [created] = await admin.createTopics([{ topic: TOPIC, numPartitions: 1, replicationFactor: 1 }]);
  assert.equal(created?.error ?? null, null);
  const scram = await admin.alterUserScramCredentials([
    { user: 'carol', mechanism: 'SCRAM-SHA-256', password: 'carol-scram' },
  ]);
  assert.deepEqual(scram, [{ user: 'carol', error: null }]);
});

after(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await broker?.stop();
});

function plainAdmin(): Admin {
  const a = new Admin({ bootstrapServers: `127.0.0.1:${broker.port}` });
  clients.push(a);
  return a;
}

async function alter(name: string, value: string | null) {
  const [result] = await plainAdmin().incrementalAlterConfigs([
    {
      type: 'broker',
      name: '0',
      ops: [value === null ? { op: 'delete', name } : { op: 'set', name, value }],
    },
  ]);
  return result!.error;
}

/** A fresh connection's SaslHandshake v1 answer for `mechanism` on the SASL listener. */
async function handshake(mechanism: string): Promise<{ errorCode: number; mechanisms: string[] }> {
  const client = await WireClient.connect('127.0.0.1', saslPort);
  try {
    return await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism });
  } finally {
    client.close();
  }
}

function producer(mechanism: 'plain' | 'scram-sha-256'): Producer {
  const p = new Producer({
    bootstrapServers: `127.0.0.1:${saslPort}`,
    lingerMs: 0,
    sasl:
      mechanism === 'plain'
        ? { mechanism, username: 'alice', password: 'alice-secret' }
        : { mechanism, username: 'carol', password: 'carol-scram' },
  });
  clients.push(p);
  return p;
}

const send = (p: Producer, value: string) =>
  p.send({ topic: TOPIC, partition: 0, value: Buffer.from(value) });

describe('SASL mechanisms changed at runtime', () => {
  it('a listener mechanism turned off is refused on new connections; open ones keep theirs', {
    timeout: 120_000,
  }, async () => {
    assert.equal((await handshake('PLAIN')).errorCode, ErrorCode.NONE);
    const before = producer('plain');
    await send(before, 'before');

    assert.equal(await alter('listener.name.sasl_plaintext.sasl.enabled.mechanisms', 'SCRAM-SHA-256'), null);
    const refused = await waitFor(
      'PLAIN refused on a new connection',
      async () => {
        const answer = await handshake('PLAIN');
        return answer.errorCode === ErrorCode.UNSUPPORTED_SASL_MECHANISM ? answer : undefined;
      },
      60_000,
    );
    assert.deepEqual(refused.mechanisms, ['SCRAM-SHA-256']);
    // The producer authenticated with PLAIN before the change keeps its connection.
    await send(before, 'after, on the old connection');
    // SCRAM, still enabled, serves a new client.
    await send(producer('scram-sha-256'), 'scram');
  });

  it('the broker-wide sasl.enabled.mechanisms applies where no listener override is set', {
    timeout: 120_000,
  }, async () => {
    assert.equal(await alter('listener.name.sasl_plaintext.sasl.enabled.mechanisms', null), null);
    assert.equal(await alter('sasl.enabled.mechanisms', 'PLAIN'), null);
    const refused = await waitFor(
      'SCRAM refused once only PLAIN is enabled broker-wide',
      async () => {
        const answer = await handshake('SCRAM-SHA-256');
        return answer.errorCode === ErrorCode.UNSUPPORTED_SASL_MECHANISM ? answer : undefined;
      },
      60_000,
    );
    assert.deepEqual(refused.mechanisms, ['PLAIN']);
    await send(producer('plain'), 'plain again');
    // Deleting the dynamic value brings the static one back.
    assert.equal(await alter('sasl.enabled.mechanisms', null), null);
    await waitFor(
      'SCRAM accepted again',
      async () => ((await handshake('SCRAM-SHA-256')).errorCode === ErrorCode.NONE ? true : undefined),
      60_000,
    );
  });

  it('a mechanism Brook does not have is refused when altered', async () => {
    const error = await alter('listener.name.sasl_plaintext.sasl.enabled.mechanisms', 'GSSAPI');
    assert.ok(error instanceof KafkaProtocolError);
    assert.equal(error.code, ErrorCode.INVALID_REQUEST);
    assert.match(error.message, /GSSAPI/);
    assert.equal((await handshake('PLAIN')).errorCode, ErrorCode.NONE);
  });

  it('the listener jaas config (its PLAIN users) changes for new connections, stored encrypted', {
    timeout: 120_000,
  }, async () => {
    const key = 'listener.name.sasl_plaintext.plain.sasl.jaas.config';
    const jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="bob-secret";';
    const alice = producer('plain');
    await send(alice, 'alice before');
    // A password config is per broker only, as in Kafka.
    const [atDefault] = await plainAdmin().incrementalAlterConfigs([
      { type: 'broker', name: '', ops: [{ op: 'set', name: key, value: jaas }] },
    ]);
    const refusal = atDefault?.error;
    assert.ok(refusal instanceof KafkaProtocolError);
    assert.equal(refusal.code, ErrorCode.INVALID_REQUEST);
    assert.match(refusal.message, /broker id must be specified/);

    assert.equal(await alter(key, jaas), null);
    const bob = new Producer({
      bootstrapServers: `127.0.0.1:${saslPort}`,
      lingerMs: 0,
      sasl: { mechanism: 'plain', username: 'bob', password: 'bob-secret' },
    });
    clients.push(bob);
    await waitFor('bob authenticating', () => send(bob, 'bob'), 60_000);
    // alice is gone from the new config: a new connection of hers fails authentication.
    const client = await WireClient.connect('127.0.0.1', saslPort);
    try {
      assert.equal(
        (await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'PLAIN' })).errorCode,
        ErrorCode.NONE,
      );
      const answer = await client.call(ApiKey.SASL_AUTHENTICATE, 2, {
        authBytes: Buffer.from('\0alice\0alice-secret'),
      });
      assert.equal(answer.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    } finally {
      client.close();
    }
    // Her connection authenticated before the change keeps working.
    await send(alice, 'alice after, on the old connection');
    // In the metadata store the value is Kafka's encrypted form, never the clear text.
    const store = (broker.broker as unknown as { store: CoordinationStore }).store;
    const node = await store.get('/config/brokers/0');
    assert.ok(node.ok);
    const stored = Buffer.from(node.value.data).toString('utf8');
    assert.doesNotMatch(stored, /bob-secret/);
    assert.match(stored, /encryptedPassword:/);
    // DescribeConfigs does not show it either.
    const described = await plainAdmin().describeConfigs([{ type: 'broker', name: '0' }]);
    const entry = described[0]?.configs.find((c) => c.name === key);
    assert.equal(entry?.value ?? null, null);
  });
});
