// Fuzzed SASL and TLS handshakes never crash the broker or reach a handler failure. In process, the SASL server
// mechanisms (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER with both validators) take thousands of mutated client messages
// and only ever answer or refuse with a SaslFailure. Through the wire, a broker gets hundreds of connections whose
// SaslHandshake and SaslAuthenticate frames, raw tokens after a v0 handshake, and TLS ClientHellos are mutated
// (bit flips, truncations, random tails, seeded); afterwards it still authenticates and serves a client, and its
// log holds no request handler failure. A failing seed is printed so that it can be replayed.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import tls from 'node:tls';
import { Connection } from '../../src/client/connection.js';
import { unsecuredToken } from '../../src/client/oauth-token.js';
import { resolveClientOptions } from '../../src/client/options.js';
import { oauthBearerClientFirst } from '../../src/client/sasl.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type DevCertFiles, writeDevCertificates } from '../../src/security/dev-certs.js';
import { SaslFailure } from '../../src/security/sasl/mechanism.js';
import { OAuthBearerServer } from '../../src/security/sasl/oauthbearer.js';
import {
  UnsecuredJwsValidator,
  unsecuredValidatorOptions,
} from '../../src/security/sasl/oauthbearer-unsecured.js';
import { PlainServer } from '../../src/security/sasl/plain.js';
import { ScramServer } from '../../src/security/sasl/scram.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';

const SEED = Number(process.env.BROOK_FUZZ_SEED ?? Date.now() % 1_000_000);

/** mulberry32: small, seeded, good enough to pick mutations. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function mutate(input: Buffer, rand: () => number): Buffer {
  const out = Buffer.from(input);
  const kind = Math.floor(rand() * 4);
  if (kind === 0 || out.length === 0) {
    const flips = 1 + Math.floor(rand() * 4);
    for (let i = 0; i < flips && out.length > 0; i++) {
      const at = Math.floor(rand() * out.length);
      out[at] = (out[at] as number) ^ (1 << Math.floor(rand() * 8));
    }
    return out;
  }
  if (kind === 1) return out.subarray(0, Math.floor(rand() * out.length));
  const tail = Buffer.alloc(1 + Math.floor(rand() * 64));
  for (let i = 0; i < tail.length; i++) tail[i] = Math.floor(rand() * 256);
  if (kind === 2) return Buffer.concat([out, tail]);
  const at = Math.floor(rand() * out.length);
  return Buffer.concat([out.subarray(0, at), tail, out.subarray(at)]);
}

function seedNote(): string {
  return `replay with BROOK_FUZZ_SEED=${SEED}`;
}

const SCRAM_FIRST = Buffer.from('n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL');

describe('SASL mechanisms take mutated messages in process', () => {
  it('PLAIN, SCRAM and OAUTHBEARER answer or refuse with a SaslFailure, never anything else', async () => {
    const rand = random(SEED);
    const validator = new UnsecuredJwsValidator(unsecuredValidatorOptions(new Map()));
    const oauthFirst = oauthBearerClientFirst(unsecuredToken({ principal: 'alice' }));
    const lookup = async () => null;
    for (let i = 0; i < 3000; i++) {
      const which = i % 4;
      try {
        if (which === 0) {
          new PlainServer(new Map([['alice', 'secret']])).step(mutate(Buffer.from('\0alice\0secret'), rand));
        } else if (which === 1) {
          const server = new ScramServer('SCRAM-SHA-256', lookup);
          await server.step(mutate(SCRAM_FIRST, rand));
          await server.step(mutate(Buffer.from('c=biws,r=fyko+d2lbbFgONRv9qkxdawL,p=dHpbWm9wbg=='), rand));
        } else if (which === 2) {
          const server = new ScramServer('SCRAM-SHA-512', lookup);
          await server.step(SCRAM_FIRST);
          await server.step(mutate(Buffer.from('c=biws,r=fyko+d2lbbFgONRv9qkxdawL,p=AAAA'), rand));
        } else {
          const server = new OAuthBearerServer(validator, () => {});
          await server.step(mutate(oauthFirst, rand));
          await server.step(mutate(Buffer.from([1]), rand));
        }
      } catch (err) {
        assert.ok(err instanceof SaslFailure, `case ${i}: ${String((err as Error).stack)}; ${seedNote()}`);
      }
    }
  });
});

describe('mutated handshakes through the wire', () => {
  const dir = mkdtempSync(join(tmpdir(), 'brook-fuzz-'));
  let certs: DevCertFiles;
  let broker: BrokerProcess;
  let saslPort: number;
  let sslPort: number;

  before(async () => {
    certs = writeDevCertificates({ dir });
    const plainPort = await freePort();
    [saslPort, sslPort] = [await freePort(), await freePort()];
    broker = await startBroker({
      port: plainPort,
      overrides: {
        listeners: `PLAINTEXT://127.0.0.1:${plainPort},SASL_PLAINTEXT://127.0.0.1:${saslPort},SSL://127.0.0.1:${sslPort}`,
        'inter.broker.listener.name': 'PLAINTEXT',
        'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256,OAUTHBEARER',
        'listener.name.sasl_plaintext.plain.sasl.jaas.config':
          'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";',
        'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config':
          'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;',
        'ssl.keystore.type': 'PEM',
        'ssl.keystore.location': certs.brokerKeystorePem,
      },
    });
  });

  after(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Writes `frames` (each with its size prefix, possibly mutated) and waits a little for answers or a close. */
  async function exchange(port: number, chunks: Buffer[]): Promise<void> {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.on('error', () => {});
    socket.on('data', () => {});
    await new Promise<void>((resolve) => {
      socket.once('connect', () => resolve());
      socket.once('close', () => resolve());
    });
    for (const chunk of chunks) socket.write(chunk);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 100);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    socket.destroy();
  }

  function framed(body: Buffer): Buffer {
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(body.length);
    return Buffer.concat([prefix, body]);
  }

  /** A real ClientHello, as Node's TLS client writes it first. */
  function clientHello(): Promise<Buffer> {
    return new Promise((resolve) => {
      const server = net.createServer((socket) => {
        socket.once('data', (data: Buffer) => {
          resolve(data);
          socket.destroy();
          server.close();
        });
      });
      server.listen(0, '127.0.0.1', () => {
        const port = (server.address() as net.AddressInfo).port;
        tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }).on('error', () => {});
      });
    });
  }

  it('survives mutated SaslHandshake, SaslAuthenticate, raw v0 tokens and ClientHellos, and still serves', async () => {
    const rand = random(SEED + 1);
    const mechanisms = ['PLAIN', 'SCRAM-SHA-256', 'OAUTHBEARER'];
    const tokens: Record<string, Buffer> = {
      PLAIN: Buffer.from('\0alice\0alice-secret'),
      'SCRAM-SHA-256': SCRAM_FIRST,
      OAUTHBEARER: oauthBearerClientFirst(unsecuredToken({ principal: 'alice' })),
    };
    const hello = await clientHello();
    const cases: (() => Promise<void>)[] = [];
    for (let i = 0; i < 400; i++) {
      const mechanism = mechanisms[i % 3] as string;
      const version = i % 5 === 0 ? 0 : 1;
      const handshake = WireClient.encode(ApiKey.SASL_HANDSHAKE, version, 1, { mechanism });
      const token = tokens[mechanism] as Buffer;
      const authenticate =
        version === 0 ? token : WireClient.encode(ApiKey.SASL_AUTHENTICATE, 2, 2, { authBytes: token });
      const mutateHandshake = rand() < 0.3;
      const first = framed(mutateHandshake ? mutate(handshake, rand) : handshake);
      // Sometimes the size prefix itself is mutated too.
      const second = rand() < 0.2 ? mutate(framed(authenticate), rand) : framed(mutate(authenticate, rand));
      cases.push(() => exchange(saslPort, [first, second]));
      if (i % 4 === 0) cases.push(() => exchange(sslPort, [mutate(hello, rand)]));
    }
    // A few at a time, so that the broker sees concurrent handshakes without the test flooding it.
    for (let i = 0; i < cases.length; i += 20) await Promise.all(cases.slice(i, i + 20).map((c) => c()));

    const options = resolveClientOptions({
      bootstrapServers: `127.0.0.1:${saslPort}`,
      sasl: { mechanism: 'plain', username: 'alice', password: 'alice-secret' },
    });
    const client = await Connection.connect('127.0.0.1', saslPort, options);
    try {
      const metadata = await client.request<{ brokers: unknown[] }>(
        ApiKey.METADATA,
        { topics: [] },
        { version: 1 },
      );
      assert.equal(metadata.brokers.length, 1);
    } finally {
      client.close();
    }
    assert.doesNotMatch(broker.log(), /request handler failed|uncaught|unhandled/i, seedNote());
  });
});
