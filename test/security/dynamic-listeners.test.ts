// Listeners changed at runtime (Kafka's DynamicListenerConfig, KIP-226) over the wire: IncrementalAlterConfigs on
// the broker resource adds an SSL and a SASL_PLAINTEXT listener to a broker started with PLAINTEXT only; Brook's
// client and kcat connect to each and produce, and the metadata it is served names the new endpoint; advertised.listeners
// changes what is served; removing a listener closes its open connections and refuses new ones. Kafka's
// validation: the inter-broker listener cannot be removed, a listener needs a security protocol, an existing
// listener keeps its protocol, a TLS listener whose key store does not load is refused.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { KafkaProtocolError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { type DevCertFiles, writeDevCertificates } from '../../src/security/dev-certs.js';
import { run } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { freePort } from '../helpers/zookeeper.js';

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";';

let dir: string;
let certs: DevCertFiles;
let broker: InProcessBroker;
let sslPort: number;
let saslPort: number;
const clients: { close(): Promise<void> }[] = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'brook-dynamic-listeners-'));
  certs = writeDevCertificates({ dir });
  sslPort = await freePort();
  saslPort = await freePort();
  // The new listeners' TLS and SASL settings are static; only the listener list changes at runtime.
  broker = await startInProcessBroker({
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,BAD:SSL',
    'listener.name.ssl.ssl.keystore.type': 'PEM',
    'listener.name.ssl.ssl.keystore.location': certs.brokerKeystorePem,
    'listener.name.bad.ssl.keystore.type': 'PEM',
    'listener.name.bad.ssl.keystore.location': join(dir, 'missing.pem'),
    'listener.name.sasl_plaintext.sasl.enabled.mechanisms': 'PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
  });
});

after(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

function admin(): Admin {
  const a = new Admin({ bootstrapServers: `127.0.0.1:${broker.port}` });
  clients.push(a);
  return a;
}

async function alter(ops: { name: string; value?: string; op?: 'set' | 'delete' }[]) {
  const a = admin();
  const [result] = await a.incrementalAlterConfigs([
    { type: 'broker', name: '0', ops: ops.map((o) => ({ op: o.op ?? 'set', name: o.name, value: o.value })) },
  ]);
  return result!.error;
}

/** Whether a TCP connection to `port` is accepted (and then left open until closed by someone). */
function connect(port: number): Promise<net.Socket | null> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(socket));
    socket.once('error', () => resolve(null));
  });
}

async function produceOver(options: ConstructorParameters<typeof Producer>[0], value: string) {
  const producer = new Producer({ ...options, lingerMs: 0 });
  try {
    return await producer.send({ topic: 'dynamic-listeners', partition: 0, value: Buffer.from(value) });
  } finally {
    await producer.close();
  }
}

const sslClient = () => ({
  bootstrapServers: `127.0.0.1:${sslPort}`,
  tls: { ca: readFileSync(certs.caCert) },
});
const saslClient = () => ({
  bootstrapServers: `127.0.0.1:${saslPort}`,
  sasl: { mechanism: 'plain' as const, username: 'alice', password: 'alice-secret' },
});

describe('listeners added and removed at runtime', () => {
  it('refuses changes Kafka refuses, with its error codes', async () => {
    const plain = `PLAINTEXT://127.0.0.1:0`;
    // The inter-broker listener (PLAINTEXT) cannot go.
    const removed = await alter([{ name: 'listeners', value: `SSL://127.0.0.1:${sslPort}` }]);
    assert.ok(removed instanceof KafkaProtocolError);
    assert.equal(removed.code, ErrorCode.INVALID_REQUEST);
    assert.match(removed.message, /inter\.broker\.listener\.name/);
    // A listener name needs a security protocol.
    const unmapped = await alter([{ name: 'listeners', value: `${plain},OTHER://127.0.0.1:${sslPort}` }]);
    assert.equal((unmapped as KafkaProtocolError).code, ErrorCode.INVALID_REQUEST);
    assert.match(String(unmapped?.message), /No security protocol defined for listener OTHER/);
    // An existing listener keeps its protocol.
    const protocol = await alter([
      { name: 'listener.security.protocol.map', value: 'PLAINTEXT:SASL_PLAINTEXT,SSL:SSL' },
    ]);
    assert.equal((protocol as KafkaProtocolError).code, ErrorCode.INVALID_REQUEST);
    assert.match(
      String(protocol?.message),
      /Security protocol cannot be updated for existing listener PLAINTEXT/,
    );
    // A TLS listener whose key store does not load is refused before it is stored.
    const bad = await alter([{ name: 'listeners', value: `${plain},BAD://127.0.0.1:${sslPort}` }]);
    assert.equal((bad as KafkaProtocolError).code, ErrorCode.INVALID_REQUEST);
    assert.match(String(bad?.message), /missing\.pem/);
    // None of these bound anything.
    const probe = await connect(sslPort);
    probe?.destroy();
    assert.equal(probe, null);
  });

  it('an added SSL and SASL_PLAINTEXT listener accept clients, which produce', {
    timeout: 120_000,
  }, async () => {
    const a = admin();
    await a.createTopics([{ topic: 'dynamic-listeners', numPartitions: 1, replicationFactor: 1 }]);
    const error = await alter([
      {
        name: 'listeners',
        value: `PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:${sslPort},SASL_PLAINTEXT://127.0.0.1:${saslPort}`,
      },
    ]);
    assert.equal(error, null);
    // Applied when the broker reloads its layers: wait until both ports accept.
    for (const port of [sslPort, saslPort]) {
      await waitFor(
        `port ${port} accepting`,
        async () => {
          const s = await connect(port);
          s?.destroy();
          return s === null ? undefined : true;
        },
        60_000,
      );
    }
    const overSsl = await waitFor(
      'a producer over the added SSL listener',
      () => produceOver(sslClient(), 'ssl'),
      60_000,
    );
    assert.equal(overSsl.partition, 0);
    const overSasl = await waitFor(
      'a producer over the added SASL_PLAINTEXT listener',
      () => produceOver(saslClient(), 'sasl'),
      60_000,
    );
    assert.ok(overSasl.offset > overSsl.offset);
    // kcat (librdkafka) too, over each added listener.
    for (const security of [
      ['-X', 'security.protocol=ssl', '-X', `ssl.ca.location=${certs.caCert}`, '-b', `127.0.0.1:${sslPort}`],
      [
        ...['-X', 'security.protocol=SASL_PLAINTEXT', '-X', 'sasl.mechanisms=PLAIN'],
        ...['-X', 'sasl.username=alice', '-X', 'sasl.password=alice-secret', '-b', `127.0.0.1:${saslPort}`],
      ],
    ]) {
      const kcat = await run('kcat', [...security, '-P', '-t', 'dynamic-listeners', '-p', '0'], {
        input: 'from kcat\n',
        timeoutMs: 60_000,
      });
      assert.equal(kcat.code, 0, kcat.stderr);
    }
    // The metadata served on each listener names that listener's endpoint.
    const sslAdmin = new Admin(sslClient());
    clients.push(sslAdmin);
    const cluster = await sslAdmin.describeCluster();
    assert.deepEqual(
      cluster.brokers.map((b) => [b.nodeId, b.host, b.port]),
      [[0, '127.0.0.1', sslPort]],
    );
  });

  it('advertised.listeners changes the endpoint clients are told', { timeout: 120_000 }, async () => {
    const error = await alter([
      {
        name: 'advertised.listeners',
        value: `PLAINTEXT://127.0.0.1:${broker.port},SSL://localhost:${sslPort},SASL_PLAINTEXT://127.0.0.1:${saslPort}`,
      },
    ]);
    assert.equal(error, null);
    const sslAdmin = new Admin(sslClient());
    clients.push(sslAdmin);
    await waitFor(
      'the SSL endpoint advertised as localhost',
      async () => {
        const cluster = await sslAdmin.describeCluster();
        return cluster.brokers[0]?.host === 'localhost' ? true : undefined;
      },
      60_000,
    );
    assert.equal(await alter([{ name: 'advertised.listeners', op: 'delete' }]), null);
  });

  it('a removed listener closes its connections and refuses new ones', { timeout: 120_000 }, async () => {
    const open = await connect(sslPort);
    assert.ok(open !== null, 'the SSL listener accepts before its removal');
    const closed = new Promise<void>((r) => open.once('close', () => r()));
    open.on('error', () => {});
    const error = await alter([
      { name: 'listeners', value: `PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:${saslPort}` },
    ]);
    assert.equal(error, null);
    await closed;
    await waitFor(
      'the SSL port refusing connections',
      async () => {
        const s = await connect(sslPort);
        s?.destroy();
        return s === null ? true : undefined;
      },
      60_000,
    );
    // The SASL listener kept serving.
    const overSasl = await produceOver(saslClient(), 'after removal');
    assert.ok(overSasl.offset >= 4);
  });
});
