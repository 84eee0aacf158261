// TLS listeners through the wire with real clients: kcat (librdkafka) over SSL and mutual TLS, kafkajs and
// Brook's own client with a CA, certificate and key from `brook certs`; the endpoints a client learns are those
// of the listener it connected to; wrong-protocol and untrusted clients are refused while the broker keeps
// serving. Certificate principals and their mapping rules are checked on a bare node:tls server.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import tls from 'node:tls';
import { Kafka, logLevel } from 'kafkajs';
import { Admin } from '../../src/client/admin.js';
import {
  DEV_PKCS12_PASSWORD,
  type DevCertFiles,
  writeDevCertificates,
} from '../../src/security/dev-certs.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { freePort } from '../helpers/zookeeper.js';

const dir = mkdtempSync(join(tmpdir(), 'brook-tls-'));
let certs: DevCertFiles;
let strangerCerts: DevCertFiles;
let broker: BrokerProcess;
let plainPort: number;
let sslPort: number;
let mtlsPort: number;

function kcat(port: number, extra: string[], args: string[], input?: string) {
  return run('kcat', ['-b', `127.0.0.1:${port}`, ...extra, ...args], { input, timeoutMs: 20_000 });
}

function sslArgs(): string[] {
  return ['-X', 'security.protocol=ssl', '-X', `ssl.ca.location=${certs.caCert}`];
}

function mtlsArgs(files: DevCertFiles = certs): string[] {
  return [
    ...sslArgs(),
    '-X',
    `ssl.certificate.location=${files.clientCert}`,
    '-X',
    `ssl.key.location=${files.clientKey}`,
  ];
}

before(async () => {
  certs = writeDevCertificates({ dir: join(dir, 'ok') });
  strangerCerts = writeDevCertificates({ dir: join(dir, 'stranger') });
  [plainPort, sslPort, mtlsPort] = [await freePort(), await freePort(), await freePort()];
  broker = await startBroker({
    port: plainPort,
    overrides: {
      listeners: `PLAINTEXT://127.0.0.1:${plainPort},SSL://127.0.0.1:${sslPort},CLIENT://127.0.0.1:${mtlsPort}`,
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SSL:SSL,CLIENT:SSL',
      'inter.broker.listener.name': 'PLAINTEXT',
      // SSL: a PEM key store file; CLIENT: a PKCS12 one and client certificates required.
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': certs.brokerKeystorePem,
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': certs.caCert,
      'listener.name.client.ssl.keystore.type': 'PKCS12',
      'listener.name.client.ssl.keystore.location': certs.brokerKeystoreP12,
      'listener.name.client.ssl.keystore.password': DEV_PKCS12_PASSWORD,
      'listener.name.client.ssl.client.auth': 'required',
    },
  });
});

after(async () => {
  await broker?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('TLS listeners with real clients', () => {
  it('kcat over SSL learns the SSL endpoints, over PLAINTEXT the plaintext ones', async () => {
    const overSsl = await kcat(sslPort, sslArgs(), ['-L', '-J']);
    assert.equal(overSsl.code, 0, overSsl.stderr);
    assert.deepEqual(JSON.parse(overSsl.stdout).brokers, [{ id: 0, name: `127.0.0.1:${sslPort}` }]);
    const overPlain = await kcat(plainPort, [], ['-L', '-J']);
    assert.equal(overPlain.code, 0, overPlain.stderr);
    assert.deepEqual(JSON.parse(overPlain.stdout).brokers, [{ id: 0, name: `127.0.0.1:${plainPort}` }]);
  });

  it('kcat produces over SSL and consumes over mutual TLS on a custom listener name', async () => {
    const produced = await kcat(sslPort, sslArgs(), ['-t', 'tls-kcat', '-P'], 'one\ntwo\n');
    assert.equal(produced.code, 0, produced.stderr);
    const consumed = await kcat(mtlsPort, mtlsArgs(), ['-t', 'tls-kcat', '-C', '-e', '-o', 'beginning']);
    assert.equal(consumed.code, 0, consumed.stderr);
    assert.deepEqual(consumed.stdout.trim().split('\n'), ['one', 'two']);
  });

  it('kafkajs produces and consumes with ssl {ca, cert, key}', async () => {
    const kafka = new Kafka({
      brokers: [`127.0.0.1:${mtlsPort}`],
      logLevel: logLevel.NOTHING,
      ssl: {
        ca: [readFileSync(certs.caCert, 'utf8')],
        cert: readFileSync(certs.clientCert, 'utf8'),
        key: readFileSync(certs.clientKey, 'utf8'),
        servername: 'localhost',
      },
    });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'tls-kafkajs', numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'tls-kafkajs', messages: [{ value: 'secret' }] });
    await producer.disconnect();
    const consumer = kafka.consumer({ groupId: 'tls-group' });
    await consumer.connect();
    await consumer.subscribe({ topic: 'tls-kafkajs', fromBeginning: true });
    const values: string[] = [];
    await consumer.run({ eachMessage: async ({ message }) => void values.push(String(message.value)) });
    await waitUntil(
      () => values.length > 0,
      15_000,
      () => 'no message consumed',
    );
    await consumer.disconnect();
    assert.deepEqual(values, ['secret']);
  });

  it("Brook's client lists topics over TLS", async () => {
    const admin = new Admin({
      bootstrapServers: `127.0.0.1:${sslPort}`,
      tls: { ca: readFileSync(certs.caCert), servername: 'localhost' },
    });
    try {
      const topics = await admin.listTopics();
      assert.ok(topics.includes('tls-kcat'), topics.join(','));
    } finally {
      await admin.close();
    }
  });

  it('refuses a client without a certificate and one with an untrusted certificate when client auth is required', async () => {
    const none = await kcat(mtlsPort, sslArgs(), ['-L', '-m', '3']);
    assert.notEqual(none.code, 0);
    const stranger = await kcat(
      mtlsPort,
      [
        ...sslArgs(),
        '-X',
        `ssl.certificate.location=${strangerCerts.clientCert}`,
        '-X',
        `ssl.key.location=${strangerCerts.clientKey}`,
      ],
      ['-L', '-m', '3'],
    );
    assert.notEqual(stranger.code, 0);
    assert.match(broker.log(), /TLS handshake failed listener=CLIENT/);
    const trusted = await kcat(mtlsPort, mtlsArgs(), ['-L']);
    assert.equal(trusted.code, 0, trusted.stderr);
  });

  it('closes a plaintext client on a TLS port and a TLS client on a plaintext port, and keeps serving', async () => {
    const plainOnTls = await kcat(sslPort, [], ['-L', '-m', '3']);
    assert.notEqual(plainOnTls.code, 0);
    await waitUntil(
      () => /TLS handshake failed listener=SSL/.test(broker.log()),
      5000,
      () => broker.log(),
    );
    const tlsOnPlain = await new Promise<string>((resolve) => {
      const socket = tls.connect({ host: '127.0.0.1', port: plainPort, ca: readFileSync(certs.caCert) });
      socket.once('secureConnect', () => resolve('connected'));
      socket.once('error', (e) => resolve(e.message));
      socket.once('close', () => resolve('closed'));
    });
    assert.notEqual(tlsOnPlain, 'connected');
    await waitUntil(
      () => /a TLS handshake: the client uses SSL on a PLAINTEXT listener/.test(broker.log()),
      5000,
      () => broker.log(),
    );
    const still = await kcat(sslPort, sslArgs(), ['-L']);
    assert.equal(still.code, 0, still.stderr);
    const stillPlain = await kcat(plainPort, [], ['-L']);
    assert.equal(stillPlain.code, 0, stillPlain.stderr);
  });
});

describe('TLS startup errors', () => {
  it('names ssl.keystore.type and the formats accepted for a JKS key store', async () => {
    const port = await freePort();
    await assert.rejects(
      startBroker({
        overrides: {
          listeners: `SSL://127.0.0.1:${port}`,
          'security.inter.broker.protocol': 'SSL',
          'ssl.keystore.location': join(dir, 'broker.jks'),
        },
      }),
      (err: Error) => /ssl\.keystore\.type/.test(err.message) && /PEM and PKCS12/.test(err.message),
    );
  });

  it('names the key when a TLS listener has no key store', async () => {
    const port = await freePort();
    await assert.rejects(
      startBroker({
        overrides: {
          listeners: `SSL://127.0.0.1:${port}`,
          'security.inter.broker.protocol': 'SSL',
          'ssl.keystore.type': 'PEM',
        },
      }),
      /ssl\.keystore\.location/,
    );
  });
});
