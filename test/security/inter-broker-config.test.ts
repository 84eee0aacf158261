// Inter-broker security settings checked at startup, before any broker dials another: a SASL inter-broker listener
// needs sasl.mechanism.inter.broker.protocol among its enabled mechanisms and the broker's own login in the
// listener's JAAS entry; each mistake stops startup with a message naming the key. (The 3-broker SASL_SSL cluster
// that proves the wire is test/security/inter-broker.slow.ts.)

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startBroker } from '../helpers/broker-process.js';
import { freePort } from '../helpers/zookeeper.js';

const USERS_ONLY =
  'org.apache.kafka.common.security.plain.PlainLoginModule required user_broker="broker-secret";';

async function saslInterBroker(overrides: Record<string, string>) {
  const port = await freePort();
  return startBroker({
    overrides: {
      listeners: `SASL_PLAINTEXT://127.0.0.1:${port}`,
      'security.inter.broker.protocol': 'SASL_PLAINTEXT',
      'sasl.enabled.mechanisms': 'PLAIN',
      ...overrides,
    },
  });
}

describe('inter-broker SASL startup errors', () => {
  it("Kafka's default inter-broker mechanism (GSSAPI) is refused, naming the key", async () => {
    await assert.rejects(
      saslInterBroker({ 'listener.name.sasl_plaintext.plain.sasl.jaas.config': USERS_ONLY }),
      /Invalid value GSSAPI for configuration sasl\.mechanism\.inter\.broker\.protocol/,
    );
  });

  it('a JAAS entry without the broker login (username, password) is refused, naming the key', async () => {
    await assert.rejects(
      saslInterBroker({
        'listener.name.sasl_plaintext.plain.sasl.jaas.config': USERS_ONLY,
        'sasl.mechanism.inter.broker.protocol': 'PLAIN',
      }),
      /listener\.name\.sasl_plaintext\.plain\.sasl\.jaas\.config must set username and password/,
    );
  });

  it('a mechanism the listener does not enable is refused', async () => {
    await assert.rejects(
      saslInterBroker({
        'listener.name.sasl_plaintext.plain.sasl.jaas.config': USERS_ONLY,
        'sasl.mechanism.inter.broker.protocol': 'SCRAM-SHA-256',
      }),
      /must be included in sasl\.enabled\.mechanisms/,
    );
  });
});
