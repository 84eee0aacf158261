// Unauthenticated peers get bounded work: 1,500 connections that never finish authenticating (silent ones, ones
// that stall half-way through a SaslAuthenticate frame, ones that never send a TLS ClientHello) do not slow an
// authenticated client's requests much, a new client still authenticates among them, and the broker closes every
// one once the authentication deadline passes (a TLS handshake has the same deadline).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '../../src/client/connection.js';
import { resolveClientOptions } from '../../src/client/options.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type DevCertFiles, writeDevCertificates } from '../../src/security/dev-certs.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";';
const dir = mkdtempSync(join(tmpdir(), 'brook-flood-'));
let certs: DevCertFiles;
let broker: BrokerProcess;
let saslPort: number;
let saslSslPort: number;
const flood: net.Socket[] = [];

function openSocket(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** A connection that did ApiVersions-free SaslHandshake and then sends 10 bytes of a 400,000-byte frame. */
async function stalledMidToken(): Promise<net.Socket> {
  const client = await WireClient.connect('127.0.0.1', saslPort);
  await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'PLAIN' });
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(400_000);
  client.raw.socket.write(Buffer.concat([prefix, Buffer.alloc(10, 7)]));
  return client.raw.socket;
}

async function latenciesMs(connection: Connection, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const metadata = await connection.request<{ brokers: unknown[] }>(
      ApiKey.METADATA,
      { topics: [] },
      { version: 1 },
    );
    assert.equal(metadata.brokers.length, 1);
    out.push(performance.now() - started);
  }
  return out.sort((a, b) => a - b);
}

const median = (sorted: number[]) => sorted[Math.floor(sorted.length / 2)] as number;

function authenticatedConnection(): Promise<Connection> {
  const options = resolveClientOptions({
    bootstrapServers: `127.0.0.1:${saslPort}`,
    sasl: { mechanism: 'plain', username: 'alice', password: 'alice-secret' },
  });
  return Connection.connect('127.0.0.1', saslPort, options);
}

before(async () => {
  certs = writeDevCertificates({ dir });
  const plainPort = await freePort();
  [saslPort, saslSslPort] = [await freePort(), await freePort()];
  broker = await startBroker({
    port: plainPort,
    overrides: {
      listeners: `PLAINTEXT://127.0.0.1:${plainPort},SASL_PLAINTEXT://127.0.0.1:${saslPort},SASL_SSL://127.0.0.1:${saslSslPort}`,
      'inter.broker.listener.name': 'PLAINTEXT',
      'sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
      'listener.name.sasl_ssl.plain.sasl.jaas.config': JAAS,
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': certs.brokerKeystorePem,
    },
  });
});

after(async () => {
  for (const socket of flood) socket.destroy();
  await broker?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('1,500 unauthenticated connections do not hold up an authenticated client, and are all closed at the deadline', async () => {
  const client = await authenticatedConnection();
  try {
    await latenciesMs(client, 20); // warm-up
    const baseline = await latenciesMs(client, 100);

    // Each is watched from its start: opening them all takes a while on a loaded machine (more than the 10 s
    // deadline, with other test files running beside), so the first may be closed before the last is open.
    const closedByBroker = new Set<net.Socket>();
    const watched = (socket: net.Socket) => {
      socket.on('error', () => {});
      socket.on('close', () => closedByBroker.add(socket));
      flood.push(socket);
    };
    for (let i = 0; i < 500; i++) watched(await openSocket(saslPort)); // silent
    for (let i = 0; i < 500; i++) watched(await stalledMidToken());
    for (let i = 0; i < 500; i++) watched(await openSocket(saslSslPort)); // no ClientHello
    // The deadline counts from each one's own start.
    const floodOpened = Date.now();

    const underFlood = await latenciesMs(client, 100);
    // Generous bounds for a loaded machine: the median may at most quadruple (plus 20 ms of noise).
    assert.ok(
      median(underFlood) < 4 * median(baseline) + 20,
      `median ${median(underFlood).toFixed(2)} ms under flood, ${median(baseline).toFixed(2)} ms before`,
    );
    const newcomerStarted = performance.now();
    const newcomer = await authenticatedConnection();
    newcomer.close();
    assert.ok(performance.now() - newcomerStarted < 2000);

    // The authentication deadline (10 s from each connection's start) closes every one, TLS handshakes included.
    while (closedByBroker.size < flood.length && Date.now() - floodOpened < 20_000) await sleep(200);
    assert.equal(closedByBroker.size, flood.length);
    assert.equal((await latenciesMs(client, 10)).length, 10);
  } finally {
    client.close();
  }
});
