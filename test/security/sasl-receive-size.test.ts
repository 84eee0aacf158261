// sasl.server.max.receive.size per listener: Kafka's SASL channel builder reads its configs with the listener's
// prefix applied, so listener.name.<listener>.sasl.server.max.receive.size bounds that listener's frames before
// authentication while other SASL listeners keep the broker-wide value.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";';
let broker: BrokerProcess;
let widePort: number;
let smallPort: number;
let unboundedPort: number;

before(async () => {
  const plainPort = await freePort();
  widePort = await freePort();
  smallPort = await freePort();
  unboundedPort = await freePort();
  broker = await startBroker({
    port: plainPort,
    overrides: {
      listeners:
        `PLAINTEXT://127.0.0.1:${plainPort},WIDE://127.0.0.1:${widePort},SMALL://127.0.0.1:${smallPort},` +
        `UNBOUNDED://127.0.0.1:${unboundedPort}`,
      'listener.security.protocol.map':
        'PLAINTEXT:PLAINTEXT,WIDE:SASL_PLAINTEXT,SMALL:SASL_PLAINTEXT,UNBOUNDED:SASL_PLAINTEXT',
      'inter.broker.listener.name': 'PLAINTEXT',
      'sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.wide.plain.sasl.jaas.config': JAAS,
      'listener.name.small.plain.sasl.jaas.config': JAAS,
      'listener.name.small.sasl.server.max.receive.size': '2000',
      'listener.name.unbounded.plain.sasl.jaas.config': JAAS,
      // Kafka's NetworkReceive.UNLIMITED: no SASL bound (Brook keeps socket.request.max.bytes).
      'listener.name.unbounded.sasl.server.max.receive.size': '-1',
    },
  });
});

after(async () => {
  await broker?.stop();
});

/** A SaslHandshake whose mechanism name makes its frame about 3000 bytes. */
function largeHandshake(client: WireClient): void {
  client.send(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'X'.repeat(3000) });
}

describe('listener.name.<listener>.sasl.server.max.receive.size', () => {
  it('bounds frames before authentication on its listener only', async () => {
    const wide = await WireClient.connect('127.0.0.1', widePort);
    try {
      largeHandshake(wide);
      const answer = await wide.receive(5000);
      assert.equal(answer.errorCode, ErrorCode.UNSUPPORTED_SASL_MECHANISM, 'the broker-wide bound admits it');
    } finally {
      wide.close();
    }
    const small = await WireClient.connect('127.0.0.1', smallPort);
    try {
      largeHandshake(small);
      await assert.rejects(small.receive(5000), /closed|ECONNRESET/);
      await waitUntil(
        () => /exceeds sasl\.server\.max\.receive\.size 2000/.test(broker.log()),
        5000,
        () => broker.log(),
      );
    } finally {
      small.close();
    }
  });

  it('lets the listener authenticate with frames within its bound, then serves larger requests', async () => {
    const client = await WireClient.connect('127.0.0.1', smallPort);
    try {
      const handshake = await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'PLAIN' });
      assert.equal(handshake.errorCode, ErrorCode.NONE);
      const auth = await client.call(ApiKey.SASL_AUTHENTICATE, 2, {
        authBytes: Buffer.from('\0alice\0alice-secret'),
      });
      assert.equal(auth.errorCode, ErrorCode.NONE);
      const names = Array.from({ length: 40 }, (_, i) => ({ name: `no-such-topic-${'y'.repeat(100)}-${i}` }));
      const metadata = await client.call(ApiKey.METADATA, 9, {
        topics: names,
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      });
      assert.equal(metadata.topics.length, 40);
    } finally {
      client.close();
    }
  });

  it('-1 lifts the bound before authentication, as NetworkReceive.UNLIMITED in Kafka', async () => {
    const client = await WireClient.connect('127.0.0.1', unboundedPort);
    try {
      const handshake = await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'PLAIN' });
      assert.equal(handshake.errorCode, ErrorCode.NONE);
      const answer = await client.call(ApiKey.SASL_AUTHENTICATE, 2, { authBytes: Buffer.alloc(600_000, 1) });
      assert.equal(answer.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED, 'the token was read and refused');
    } finally {
      client.close();
    }
  });
});
