// TLS listener settings through a broker, with certificates written by `brook certs` as the README's TLS quick
// start does: the principal each kind of connection gets (User:ANONYMOUS on PLAINTEXT and without a certificate,
// the certificate's RFC 2253 DN with DEFAULT mapping, a listener's own ssl.principal.mapping.rules), seen in the
// authorization log of the broker the request reached; ssl.client.auth=requested serving clients with and without
// a certificate and refusing an untrusted one; a listener limited by ssl.enabled.protocols and ssl.cipher.suites,
// with an inline encrypted PEM key store and ssl.key.password.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import tls from 'node:tls';
import { Admin } from '../../src/client/admin.js';
import { type DevCertFiles, writeDevCertificates } from '../../src/security/dev-certs.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { freePort } from '../helpers/zookeeper.js';

const BIN = resolve(import.meta.dirname, '../../../bin/brook');
const DN = 'CN=client,OU=Clients,O=Brook dev,C=US';
const dir = mkdtempSync(join(tmpdir(), 'brook-tls-settings-'));
const certs = join(dir, 'certs');
let stranger: DevCertFiles;
let broker: BrokerProcess;
const ports: Record<'plain' | 'req' | 'mtls' | 'old', number> = { plain: 0, req: 0, mtls: 0, old: 0 };

function kcat(port: number, extra: string[], args: string[]) {
  return run('kcat', ['-b', `127.0.0.1:${port}`, ...extra, ...args], { timeoutMs: 30_000 });
}

function ssl(cert?: { cert: string; key: string }): string[] {
  const args = ['-X', 'security.protocol=ssl', '-X', `ssl.ca.location=${join(certs, 'ca-cert.pem')}`];
  if (cert !== undefined)
    args.push('-X', `ssl.certificate.location=${cert.cert}`, '-X', `ssl.key.location=${cert.key}`);
  return args;
}

const CLIENT = { cert: join(certs, 'client-cert.pem'), key: join(certs, 'client-key.pem') };

/** Asks for one topic's metadata and waits for the authorization log to name who asked. */
async function principalFor(port: number, extra: string[], topic: string): Promise<string> {
  const pattern = new RegExp(
    `Principal = (\\S+(?: \\S+)*?) is Allowed Operation = Describe from host = 127\\.0\\.0\\.1 on resource = Topic:LITERAL:${topic} `,
    'g',
  );
  const lines = () => [...broker.log().matchAll(pattern)].map((m) => m[1] as string);
  // Only lines written after this call count: a listing of every topic through another listener may have
  // described this topic before.
  const earlier = lines().length;
  const listed = await kcat(port, extra, ['-L', '-t', topic]);
  assert.equal(listed.code, 0, listed.stderr);
  await waitUntil(
    () => lines().length > earlier,
    20_000,
    () => `no new Describe of ${topic} in the authorization log:\n${broker.log().slice(-3000)}`,
  );
  const found = new Set(lines().slice(earlier));
  assert.equal(found.size, 1, [...found].join(' / '));
  return [...found][0] as string;
}

before(async () => {
  // The README's first step, as a user runs it.
  const written = await run(process.execPath, [
    BIN,
    'certs',
    '--dir',
    certs,
    '--hosts',
    '127.0.0.1,localhost',
  ]);
  assert.equal(written.code, 0, written.stderr);
  assert.match(written.stdout, /ssl\.keystore\.location=.*broker\.pem/);
  stranger = writeDevCertificates({ dir: join(dir, 'stranger') });
  for (const name of Object.keys(ports) as (keyof typeof ports)[]) ports[name] = await freePort();
  const encryptedKey = execFileSync('openssl', [
    'pkcs8',
    '-topk8',
    '-in',
    join(certs, 'broker-key.pem'),
    '-v2',
    'aes-256-cbc',
    '-passout',
    'pass:key-secret',
  ]).toString();
  broker = await startBroker({
    port: ports.plain,
    overrides: {
      listeners: `PLAINTEXT://127.0.0.1:${ports.plain},REQ://127.0.0.1:${ports.req},MTLS://127.0.0.1:${ports.mtls},OLD://127.0.0.1:${ports.old}`,
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,REQ:SSL,MTLS:SSL,OLD:SSL',
      'inter.broker.listener.name': 'PLAINTEXT',
      // The quick start's broker settings, the key store file per listener (OLD has its key store inline).
      'ssl.keystore.type': 'PEM',
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': join(certs, 'ca-cert.pem'),
      'listener.name.req.ssl.keystore.location': join(certs, 'broker.pem'),
      'listener.name.mtls.ssl.keystore.location': join(certs, 'broker.pem'),
      'listener.name.req.ssl.client.auth': 'requested',
      'listener.name.req.ssl.principal.mapping.rules': 'RULE:^CN=(.*?),OU=.*$/$1/U',
      'listener.name.mtls.ssl.client.auth': 'required',
      'listener.name.old.ssl.keystore.key': encryptedKey,
      'listener.name.old.ssl.keystore.certificate.chain': readFileSync(
        join(certs, 'broker-cert.pem'),
        'utf8',
      ),
      'listener.name.old.ssl.key.password': 'key-secret',
      'listener.name.old.ssl.enabled.protocols': 'TLSv1.2',
      'listener.name.old.ssl.cipher.suites': 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
      // Every check in the log, none refused: the log shows who each connection is.
      'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer',
      'allow.everyone.if.no.acl.found': 'true',
      'brook.authorizer.log.level': 'DEBUG',
    },
  });
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  try {
    const topics = ['who-plain', 'who-req-none', 'who-req-cert', 'who-mtls', 'who-old'];
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

describe('principals through the broker', () => {
  it('PLAINTEXT is User:ANONYMOUS', async () => {
    assert.equal(await principalFor(ports.plain, [], 'who-plain'), 'User:ANONYMOUS');
  });

  it('ssl.client.auth=requested: without a certificate User:ANONYMOUS, with one the listener rule maps its DN', async () => {
    assert.equal(await principalFor(ports.req, ssl(), 'who-req-none'), 'User:ANONYMOUS');
    assert.equal(await principalFor(ports.req, ssl(CLIENT), 'who-req-cert'), 'User:CLIENT');
  });

  it('ssl.client.auth=requested refuses a certificate from another CA', async () => {
    const refused = await kcat(ports.req, ssl({ cert: stranger.clientCert, key: stranger.clientKey }), [
      '-L',
      '-m',
      '5',
    ]);
    assert.notEqual(refused.code, 0);
    const still = await kcat(ports.req, ssl(CLIENT), ['-L']);
    assert.equal(still.code, 0, still.stderr);
  });

  it("mutual TLS with DEFAULT mapping is the certificate's DN in RFC 2253 order", async () => {
    assert.equal(await principalFor(ports.mtls, ssl(CLIENT), 'who-mtls'), `User:${DN}`);
  });
});

describe('ssl.enabled.protocols, ssl.cipher.suites and an inline encrypted key store', () => {
  function handshake(options: tls.ConnectionOptions): Promise<{ protocol: string; cipher: string } | Error> {
    return new Promise((resolveHandshake) => {
      const socket = tls.connect({
        host: '127.0.0.1',
        port: ports.old,
        ca: readFileSync(join(certs, 'ca-cert.pem')),
        ...options,
      });
      socket.once('secureConnect', () => {
        resolveHandshake({
          protocol: socket.getProtocol() ?? '',
          cipher: socket.getCipher().standardName,
        });
        socket.destroy();
      });
      socket.once('error', (err) => {
        resolveHandshake(err);
        socket.destroy();
      });
    });
  }

  it('serves TLS 1.2 with the one suite named, refuses TLS 1.3 and other suites', async () => {
    assert.deepEqual(await handshake({}), {
      protocol: 'TLSv1.2',
      cipher: 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
    });
    assert.ok((await handshake({ minVersion: 'TLSv1.3' })) instanceof Error, 'TLS 1.3 only');
    assert.ok(
      (await handshake({ maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' })) instanceof Error,
      'another TLS 1.2 suite',
    );
  });

  it('kcat is served there as User:ANONYMOUS', async () => {
    assert.equal(await principalFor(ports.old, ssl(), 'who-old'), 'User:ANONYMOUS');
  });
});
