// Brook's console tools take Kafka's client security keys from the files Kafka's tools read them from:
// kafka-console-producer's --producer.config and kafka-console-consumer's --consumer.config, over mutual TLS (a PEM
// key store), SASL_SSL with SCRAM-SHA-512 and SASL_PLAINTEXT with PLAIN (sasl.jaas.config). The host name check
// (ssl.endpoint.identification.algorithm, https by default) refuses a broker certificate made for another host; an
// empty value turns it off, as in Kafka. The same for the connection a broker opens to another broker's
// inter-broker listener, with the options a broker builds from that listener's ssl.* keys.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InterBrokerConnection } from '../../src/broker/cluster/inter-broker-connection.js';
import { BROKER_KEYS, brokerKey } from '../../src/broker/config/broker-keys.js';
import { ParsedConfig } from '../../src/broker/config/parsed-config.js';
import { Admin } from '../../src/client/admin.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type DevCertFiles, writeDevCertificates } from '../../src/security/dev-certs.js';
import { listenerTlsClientOptions } from '../../src/security/tls-listener.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { freePort } from '../helpers/zookeeper.js';

const BIN = resolve(import.meta.dirname, '../../../bin/brook');
const JAAS_PLAIN =
  'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";';
const dir = mkdtempSync(join(tmpdir(), 'brook-tool-configs-'));
let certs: DevCertFiles;
let elsewhere: DevCertFiles;
let broker: BrokerProcess;
const ports = { plain: 0, mtls: 0, saslSsl: 0, saslPlain: 0, elsewhere: 0 };

function brook(args: string[], input?: string) {
  return run(process.execPath, [BIN, ...args], { input, timeoutMs: 60_000 });
}

function propertiesFile(name: string, lines: string[]): string {
  const file = join(dir, `${name}.properties`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** Produces `value` with --producer.config and reads it back with --consumer.config, both from `config`. */
async function roundTrip(port: number, config: string, topic: string, value: string): Promise<string> {
  const bootstrap = ['--bootstrap-server', `127.0.0.1:${port}`, '--topic', topic];
  const produced = await brook(['console-producer', ...bootstrap, '--producer.config', config], `${value}\n`);
  assert.equal(produced.code, 0, produced.stderr);
  const consumed = await brook([
    'console-consumer',
    ...bootstrap,
    '--consumer.config',
    config,
    '--from-beginning',
    '--max-messages',
    '1',
    '--timeout-ms',
    '30000',
  ]);
  assert.equal(consumed.code, 0, consumed.stderr);
  return consumed.stdout.trim();
}

before(async () => {
  certs = writeDevCertificates({ dir: join(dir, 'certs') });
  elsewhere = writeDevCertificates({ dir: join(dir, 'elsewhere'), hosts: ['broker.invalid'] });
  for (const name of Object.keys(ports) as (keyof typeof ports)[]) ports[name] = await freePort();
  broker = await startBroker({
    port: ports.plain,
    overrides: {
      listeners: [
        `PLAINTEXT://127.0.0.1:${ports.plain}`,
        `MTLS://127.0.0.1:${ports.mtls}`,
        `SASL_SSL://127.0.0.1:${ports.saslSsl}`,
        `SASL_PLAINTEXT://127.0.0.1:${ports.saslPlain}`,
        `ELSEWHERE://127.0.0.1:${ports.elsewhere}`,
      ].join(','),
      'listener.security.protocol.map':
        'PLAINTEXT:PLAINTEXT,MTLS:SSL,SASL_SSL:SASL_SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,ELSEWHERE:SSL',
      'inter.broker.listener.name': 'PLAINTEXT',
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': certs.brokerKeystorePem,
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': certs.caCert,
      'listener.name.mtls.ssl.client.auth': 'required',
      // A certificate for another host name, from another CA.
      'listener.name.elsewhere.ssl.keystore.location': elsewhere.brokerKeystorePem,
      'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-512',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS_PLAIN,
      'listener.name.sasl_ssl.plain.sasl.jaas.config': JAAS_PLAIN,
    },
  });
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  try {
    const scram = await admin.alterUserScramCredentials([
      { user: 'carol', mechanism: 'SCRAM-SHA-512', password: 'carol-scram' },
    ]);
    assert.deepEqual(scram, [{ user: 'carol', error: null }]);
    const topics = ['tool-mtls', 'tool-scram', 'tool-plain', 'tool-elsewhere'];
    const created = await admin.createTopics(topics.map((topic) => ({ topic, numPartitions: 1 })));
    assert.deepEqual(
      created.filter((r) => r.error !== null),
      [],
    );
  } finally {
    await admin.close();
  }
});

after(async () => {
  await broker?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('console tools with Kafka client security keys', () => {
  it('--producer.config and --consumer.config over mutual TLS with a PEM key store', async () => {
    const config = propertiesFile('mtls', [
      'security.protocol=SSL',
      'ssl.truststore.type=PEM',
      `ssl.truststore.location=${certs.caCert}`,
      'ssl.keystore.type=PEM',
      `ssl.keystore.location=${certs.clientKeystorePem}`,
    ]);
    assert.equal(await roundTrip(ports.mtls, config, 'tool-mtls', 'over-mtls'), 'over-mtls');
  });

  it('--producer.config and --consumer.config over SASL_SSL with SCRAM-SHA-512', async () => {
    const config = propertiesFile('scram', [
      'security.protocol=SASL_SSL',
      'ssl.truststore.type=PEM',
      `ssl.truststore.location=${certs.caCert}`,
      'sasl.mechanism=SCRAM-SHA-512',
      'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="carol" password="carol-scram";',
    ]);
    assert.equal(await roundTrip(ports.saslSsl, config, 'tool-scram', 'over-scram'), 'over-scram');
  });

  it('--producer.config and --consumer.config over SASL_PLAINTEXT with PLAIN', async () => {
    const config = propertiesFile('plain', [
      'security.protocol=SASL_PLAINTEXT',
      'sasl.mechanism=PLAIN',
      'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";',
    ]);
    assert.equal(await roundTrip(ports.saslPlain, config, 'tool-plain', 'over-plain'), 'over-plain');
  });

  it('a broker certificate for another host is refused unless ssl.endpoint.identification.algorithm is empty', async () => {
    const trusting = [
      'security.protocol=SSL',
      'ssl.truststore.type=PEM',
      `ssl.truststore.location=${elsewhere.caCert}`,
    ];
    const checked = propertiesFile('checked', trusting);
    const refused = await brook(
      [
        'console-producer',
        '--bootstrap-server',
        `127.0.0.1:${ports.elsewhere}`,
        '--topic',
        'tool-elsewhere',
        '--producer.config',
        checked,
        // As Kafka's producer, it waits max.block.ms for metadata it cannot get, then fails the send.
        '--producer-property',
        'max.block.ms=5000',
      ],
      'refused\n',
    );
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /does not match certificate's altnames: IP: 127\.0\.0\.1/);
    const unchecked = propertiesFile('unchecked', [...trusting, 'ssl.endpoint.identification.algorithm=']);
    assert.equal(await roundTrip(ports.elsewhere, unchecked, 'tool-elsewhere', 'not-checked'), 'not-checked');
  });
});

describe('the inter-broker connection checks the host name too', () => {
  async function apiVersionsOverInterBroker(extra: Record<string, string>): Promise<unknown> {
    const values = ParsedConfig.parse(
      BROKER_KEYS,
      new Map(
        Object.entries({
          'ssl.keystore.type': 'PEM',
          'ssl.keystore.location': certs.brokerKeystorePem,
          'ssl.truststore.type': 'PEM',
          'ssl.truststore.location': elsewhere.caCert,
          ...extra,
        }),
      ),
      brokerKey,
    );
    const connection = new InterBrokerConnection('127.0.0.1', ports.elsewhere, 'inter-broker-test', {
      tls: listenerTlsClientOptions(values, 'ELSEWHERE'),
      sasl: null,
    });
    try {
      return await connection.request(ApiKey.API_VERSIONS, 0, {}, 15_000);
    } finally {
      connection.close();
    }
  }

  it('refuses a certificate for another host by default (https), and connects when the check is off', async () => {
    await assert.rejects(apiVersionsOverInterBroker({}), /altnames/);
    const answered = (await apiVersionsOverInterBroker({
      'listener.name.elsewhere.ssl.endpoint.identification.algorithm': '',
    })) as { errorCode: number };
    assert.equal(answered.errorCode, 0);
  });
});
