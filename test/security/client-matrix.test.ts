// Every real client the security issue names, unchanged, over every secured listener kind: SSL, mutual TLS
// (client certificate required), SASL_PLAINTEXT and SASL_SSL with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512. Each
// client writes one record through the listener and reads it back through the same listener: kafka-python and
// confluent-kafka-python (one process per library, every case in it), kcat, kafkajs, @platformatic/kafka and
// Brook's own client. The mutual-TLS listener refuses clients without a certificate (tls.test.ts), so passing there proves the
// client presented one.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ConnectionOptions } from 'node:tls';
import {
  Consumer as PlatformaticConsumer,
  Producer as PlatformaticProducer,
  stringDeserializers,
  stringSerializers,
} from '@platformatic/kafka';
import { Kafka, logLevel, type SASLOptions } from 'kafkajs';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import type { SaslOptions } from '../../src/client/options.js';
import { Producer } from '../../src/client/producer.js';
import { type DevCertFiles, writeDevCertificates } from '../../src/security/dev-certs.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { freePort } from '../helpers/zookeeper.js';

const PYTHON = '/usr/bin/python3'; // Debian's python3-kafka and python3-confluent-kafka
const SCRIPT = resolve(import.meta.dirname, '../../../test/compat/scripts/security_matrix.py');
const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";';
type Mechanism = 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
const MECHANISMS: readonly Mechanism[] = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'];

interface Case {
  readonly name: string;
  readonly listener: 'SSL' | 'MTLS' | 'SASL_PLAINTEXT' | 'SASL_SSL';
  readonly protocol: 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';
  readonly mechanism?: Mechanism;
}

const CASES: readonly Case[] = [
  { name: 'ssl', listener: 'SSL', protocol: 'SSL' },
  { name: 'mtls', listener: 'MTLS', protocol: 'SSL' },
  ...MECHANISMS.flatMap((mechanism) =>
    (['SASL_PLAINTEXT', 'SASL_SSL'] as const).map((protocol) => ({
      name: `${protocol.toLowerCase()}-${mechanism.toLowerCase()}`,
      listener: protocol,
      protocol,
      mechanism,
    })),
  ),
];

const dir = mkdtempSync(join(tmpdir(), 'brook-client-matrix-'));
let certs: DevCertFiles;
let broker: BrokerProcess;
const ports = new Map<Case['listener'], number>();

function user(mechanism: Mechanism): { username: string; password: string } {
  return mechanism === 'PLAIN'
    ? { username: 'alice', password: 'alice-secret' }
    : { username: 'carol', password: 'carol-scram' };
}

function bootstrap(c: Case): string {
  return `127.0.0.1:${ports.get(c.listener)}`;
}

function topicOf(client: string, c: Case): string {
  return `matrix-${client}-${c.name}`;
}

async function createTopics(client: string): Promise<void> {
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  try {
    const results = await admin.createTopics(
      CASES.map((c) => ({ topic: topicOf(client, c), numPartitions: 1, replicationFactor: 1 })),
    );
    assert.deepEqual(
      results.filter((r) => r.error !== null),
      [],
    );
  } finally {
    await admin.close();
  }
}

/** Runs every case through one of the Python libraries and expects "ok" for each. */
async function pythonMatrix(lib: 'kafka-python' | 'confluent'): Promise<void> {
  await createTopics(lib);
  const cases = CASES.map((c) => ({
    name: c.name,
    bootstrap: bootstrap(c),
    topic: topicOf(lib, c),
    protocol: c.protocol,
    ca: certs.caCert,
    ...(c.listener === 'MTLS' ? { cert: certs.clientCert, key: certs.clientKey } : {}),
    ...(c.mechanism === undefined ? {} : { mechanism: c.mechanism, ...user(c.mechanism) }),
  }));
  const result = await run(PYTHON, [SCRIPT, lib, JSON.stringify(cases)], { timeoutMs: 240_000 });
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(
    JSON.parse(result.stdout),
    Object.fromEntries(CASES.map((c) => [c.name, 'ok'])),
    `${result.stdout}\n${result.stderr.slice(-3000)}`,
  );
}

function tlsFiles(c: Case): ConnectionOptions | undefined {
  if (c.protocol === 'SASL_PLAINTEXT') return undefined;
  return {
    ca: readFileSync(certs.caCert),
    ...(c.listener === 'MTLS'
      ? { cert: readFileSync(certs.clientCert), key: readFileSync(certs.clientKey) }
      : {}),
  };
}

before(async () => {
  certs = writeDevCertificates({ dir });
  const plainPort = await freePort();
  for (const listener of ['SSL', 'MTLS', 'SASL_PLAINTEXT', 'SASL_SSL'] as const)
    ports.set(listener, await freePort());
  broker = await startBroker({
    port: plainPort,
    overrides: {
      listeners: [
        `PLAINTEXT://127.0.0.1:${plainPort}`,
        ...[...ports].map(([name, port]) => `${name}://127.0.0.1:${port}`),
      ].join(','),
      'listener.security.protocol.map':
        'PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL',
      'inter.broker.listener.name': 'PLAINTEXT',
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': certs.brokerKeystorePem,
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': certs.caCert,
      'listener.name.mtls.ssl.client.auth': 'required',
      'sasl.enabled.mechanisms': MECHANISMS.join(','),
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
      'listener.name.sasl_ssl.plain.sasl.jaas.config': JAAS,
      // Consumer groups of one member need not wait for more (kafkajs and @platformatic/kafka read through groups).
      'group.initial.rebalance.delay.ms': 0,
    },
  });
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  try {
    const results = await admin.alterUserScramCredentials([
      { user: 'carol', mechanism: 'SCRAM-SHA-256', password: 'carol-scram' },
      { user: 'carol', mechanism: 'SCRAM-SHA-512', password: 'carol-scram' },
    ]);
    // Kafka answers one result per user.
    assert.deepEqual(results, [{ user: 'carol', error: null }]);
  } finally {
    await admin.close();
  }
});

after(async () => {
  await broker?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('real clients over SSL, mutual TLS, SASL_PLAINTEXT and SASL_SSL with PLAIN and SCRAM', () => {
  it('kafka-python produces and consumes in every case', { timeout: 300_000 }, async () => {
    await pythonMatrix('kafka-python');
  });

  it('confluent-kafka-python produces and consumes in every case', { timeout: 300_000 }, async () => {
    await pythonMatrix('confluent');
  });

  it('kcat produces and consumes in every case', { timeout: 300_000 }, async () => {
    await createTopics('kcat');
    for (const c of CASES) {
      const settings = ['-X', `security.protocol=${c.protocol.toLowerCase()}`];
      if (c.protocol !== 'SASL_PLAINTEXT') settings.push('-X', `ssl.ca.location=${certs.caCert}`);
      if (c.listener === 'MTLS')
        settings.push(
          '-X',
          `ssl.certificate.location=${certs.clientCert}`,
          '-X',
          `ssl.key.location=${certs.clientKey}`,
        );
      if (c.mechanism !== undefined) {
        const { username, password } = user(c.mechanism);
        settings.push(
          '-X',
          `sasl.mechanism=${c.mechanism}`,
          '-X',
          `sasl.username=${username}`,
          '-X',
          `sasl.password=${password}`,
        );
      }
      const kcat = (args: string[], input?: string) =>
        run('kcat', ['-b', bootstrap(c), ...settings, '-t', topicOf('kcat', c), ...args], {
          input,
          timeoutMs: 30_000,
        });
      const produced = await kcat(['-P', '-p', '0'], `${c.name}\n`);
      assert.equal(produced.code, 0, `${c.name}: ${produced.stderr}`);
      const consumed = await kcat(['-C', '-p', '0', '-o', 'beginning', '-e']);
      assert.equal(consumed.code, 0, `${c.name}: ${consumed.stderr}`);
      assert.deepEqual(consumed.stdout.trim().split('\n'), [c.name], c.name);
    }
  });

  it('kafkajs produces and consumes in every case', { timeout: 300_000 }, async () => {
    await createTopics('kafkajs');
    for (const c of CASES) {
      const tls = tlsFiles(c);
      const kafka = new Kafka({
        clientId: 'matrix-kafkajs',
        brokers: [bootstrap(c)],
        logLevel: logLevel.NOTHING,
        ...(tls === undefined ? {} : { ssl: tls }),
        ...(c.mechanism === undefined
          ? {}
          : {
              // kafkajs types each mechanism apart; the three take the same fields.
              sasl: {
                mechanism: c.mechanism.toLowerCase(),
                ...user(c.mechanism),
              } as SASLOptions,
            }),
      });
      const topic = topicOf('kafkajs', c);
      const producer = kafka.producer();
      await producer.connect();
      try {
        await producer.send({ topic, messages: [{ value: c.name, partition: 0 }] });
      } finally {
        await producer.disconnect();
      }
      // A short fetch wait: disconnecting waits for the fetch in flight.
      const consumer = kafka.consumer({ groupId: `matrix-kafkajs-${c.name}`, maxWaitTimeInMs: 100 });
      const values: string[] = [];
      await consumer.connect();
      try {
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({ eachMessage: async ({ message }) => void values.push(String(message.value)) });
        await waitUntil(
          () => values.length > 0,
          30_000,
          () => `${c.name}: nothing consumed`,
        );
      } finally {
        await consumer.disconnect();
      }
      assert.deepEqual(values, [c.name], c.name);
    }
  });

  it('@platformatic/kafka produces and consumes in every case', { timeout: 300_000 }, async () => {
    await createTopics('platformatic');
    for (const c of CASES) {
      const tls = tlsFiles(c);
      const security = {
        bootstrapBrokers: [bootstrap(c)],
        ...(tls === undefined ? {} : { tls }),
        ...(c.mechanism === undefined ? {} : { sasl: { mechanism: c.mechanism, ...user(c.mechanism) } }),
      };
      const topic = topicOf('platformatic', c);
      const producer = new PlatformaticProducer({
        clientId: 'matrix-platformatic',
        serializers: stringSerializers,
        ...security,
      });
      try {
        await producer.send({ messages: [{ topic, partition: 0, value: c.name }] });
      } finally {
        await producer.close();
      }
      const consumer = new PlatformaticConsumer<string, string, string, string>({
        clientId: 'matrix-platformatic',
        groupId: `matrix-platformatic-${c.name}`,
        maxWaitTime: 200,
        deserializers: stringDeserializers,
        ...security,
      });
      const values: string[] = [];
      try {
        const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false });
        stream.on('data', (message: { value: string }) => void values.push(message.value));
        await waitUntil(
          () => values.length > 0,
          30_000,
          () => `${c.name}: nothing consumed`,
        );
        await stream.close();
      } finally {
        await consumer.close();
      }
      assert.deepEqual(values, [c.name], c.name);
    }
  });

  it("Brook's client produces and consumes in every case", { timeout: 300_000 }, async () => {
    await createTopics('brook');
    for (const c of CASES) {
      const tls = tlsFiles(c);
      const sasl: SaslOptions | undefined =
        c.mechanism === undefined
          ? undefined
          : {
              mechanism: c.mechanism.toLowerCase() as 'plain' | 'scram-sha-256' | 'scram-sha-512',
              ...user(c.mechanism),
            };
      const security = {
        bootstrapServers: bootstrap(c),
        ...(tls === undefined ? {} : { tls }),
        ...(sasl === undefined ? {} : { sasl }),
      };
      const topic = topicOf('brook', c);
      const producer = new Producer({ ...security, lingerMs: 0 });
      try {
        await producer.send({ topic, partition: 0, value: Buffer.from(c.name) });
      } finally {
        await producer.close();
      }
      const consumer = new Consumer({ ...security, autoOffsetReset: 'earliest' });
      const values: string[] = [];
      try {
        consumer.assign([{ topic, partition: 0 }]);
        const deadline = Date.now() + 30_000;
        while (values.length === 0 && Date.now() < deadline)
          for (const record of await consumer.poll(500)) values.push(String(record.value));
      } finally {
        await consumer.close();
      }
      assert.deepEqual(values, [c.name], c.name);
    }
  });
});
