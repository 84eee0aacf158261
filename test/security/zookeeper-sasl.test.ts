// SASL DIGEST-MD5 to ZooKeeper as a Kafka broker does it (a JAAS `Client` section named in KAFKA_OPTS), against
// Debian's ZooKeeper with SASLAuthenticationProvider and enforce.auth.schemes=sasl: the store authenticates on
// every connection; a wrong password and a client without SASL get nothing done; a broker process registers,
// is elected controller and creates a topic. The DIGEST-MD5 arithmetic is checked against RFC 2831's example.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { connectZooKeeper } from '../../src/controller/store/zookeeper-store.js';
import { DigestMd5Client, parseDirectives } from '../../src/security/sasl/digest-md5-client.js';
import { digestExchanges, jaasSection, zooKeeperSaslLogin } from '../../src/security/zookeeper-sasl.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { sleep } from '../helpers/wait.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';

const dir = mkdtempSync(join(tmpdir(), 'brook-zk-sasl-'));
let zk: TestZooKeeper;

function jaasFile(name: string, section: string): string {
  const path = join(dir, name);
  writeFileSync(path, section);
  return path;
}

const CLIENT_JAAS = `// written as for a Kafka broker
Client {
  org.apache.zookeeper.server.auth.DigestLoginModule required
  username="brook"
  password="zk-secret";
};
`;

async function trySession(login: { username: string; password: string } | null) {
  const errors: string[] = [];
  const opened = await connectZooKeeper({
    connect: zk.connect,
    sessionTimeoutMs: 6_000,
    connectionTimeoutMs: 4_000,
    sasl: login === null ? null : digestExchanges({ ...login, service: 'zookeeper' }),
    onConnectionError: (err) => errors.push(err.message),
  });
  return { opened, errors };
}

before(async () => {
  zk = await startTestZooKeeper({ saslUsers: { brook: 'zk-secret', other: 'other-secret' } });
});

after(async () => {
  await zk?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('DIGEST-MD5 client', () => {
  it("computes RFC 2831's example response and checks its rspauth", () => {
    const client = new DigestMd5Client({
      username: 'chris',
      password: 'secret',
      protocol: 'imap',
      serverName: 'elwood.innosoft.com',
      cnonce: 'OA6MHXh6VqTrRk',
    });
    assert.deepEqual(client.evaluate(Buffer.alloc(0)), Buffer.alloc(0));
    const response = client.evaluate(
      Buffer.from(
        'realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8',
      ),
    );
    assert.ok(Buffer.isBuffer(response));
    const fields = parseDirectives(response.toString());
    assert.ok(!(fields instanceof Error));
    assert.equal(fields.get('response'), 'd388dad90d4bbd760a152321f2143af7');
    assert.equal(fields.get('digest-uri'), 'imap/elwood.innosoft.com');
    assert.ok(client.evaluate(Buffer.from('rspauth=00000000000000000000000000000000')) instanceof Error);
  });

  it('accepts the right rspauth and refuses malformed challenges', () => {
    const client = new DigestMd5Client({
      username: 'chris',
      password: 'secret',
      protocol: 'imap',
      serverName: 'elwood.innosoft.com',
      cnonce: 'OA6MHXh6VqTrRk',
    });
    client.evaluate(Buffer.alloc(0));
    client.evaluate(
      Buffer.from(
        'realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8',
      ),
    );
    assert.equal(client.evaluate(Buffer.from('rspauth=ea40f60335c427b5527b84dbabcdfffd')), null);
    assert.ok(client.isComplete());
    for (const bad of [
      'nonce=',
      'qop="auth-conf",nonce="x",algorithm=md5-sess',
      'nonce="x",qop=auth',
      '"',
      'a=1,a=2',
    ]) {
      const fresh = new DigestMd5Client({
        username: 'u',
        password: 'p',
        protocol: 'zookeeper',
        serverName: 'zk',
      });
      fresh.evaluate(Buffer.alloc(0));
      assert.ok(fresh.evaluate(Buffer.from(bad)) instanceof Error, bad);
    }
  });
});

describe('ZooKeeper with SASL required', () => {
  it('the store authenticates with DIGEST-MD5 and works, again after a reconnection', async () => {
    const { opened, errors } = await trySession({ username: 'brook', password: 'zk-secret' });
    assert.ok(opened.ok, errors.join('\n'));
    const store = opened.value;
    try {
      assert.ok((await store.create('/sasl-check', Buffer.from('yes'))).ok);
      const read = await store.get('/sasl-check');
      assert.ok(read.ok);
      assert.equal(Buffer.from(read.value.data).toString(), 'yes');
      // Drop the connection under the session: the client reconnects and must authenticate again.
      const reconnected = new Promise<void>((resolve) => {
        store.onSessionEvent((event) => {
          if (event === 'reconnected') resolve();
        });
      });
      const manager = (store as unknown as { client: { connectionManager: { socket: { destroy(): void } } } })
        .client.connectionManager;
      manager.socket.destroy();
      await reconnected;
      assert.ok((await store.set('/sasl-check', Buffer.from('again'), -1)).ok);
    } finally {
      await store.close();
    }
  });

  it('a wrong password is refused, and the reason is reported', async () => {
    const { opened, errors } = await trySession({ username: 'brook', password: 'wrong' });
    assert.ok(!opened.ok);
    assert.match(errors.join('\n'), /SASL authentication failed/);
  });

  it('a client without SASL gets nothing done, and its process survives the refusal', async () => {
    const { opened, errors } = await trySession(null);
    if (!opened.ok) return; // refused outright
    const store = opened.value;
    try {
      const created = await Promise.race([
        store.create('/no-sasl', Buffer.from('x')),
        sleep(5_000).then(() => ({ ok: false as const, code: 'timeout' })),
      ]);
      assert.ok(!created.ok, 'an unauthenticated create succeeded');
      // ZooKeeper answers -124 (SESSIONCLOSEDREQUIRESASLAUTH), which node-zookeeper-client cannot parse: the
      // connection is dropped and reported instead of the process ending with an uncaught exception.
      assert.match(errors.join('\n'), /not understood/);
    } finally {
      await store.close();
    }
  });
});

describe('a broker whose ZooKeeper requires SASL', () => {
  let broker: BrokerProcess | undefined;
  after(async () => {
    await broker?.stop();
  });

  it('authenticates with the JAAS Client section from KAFKA_OPTS, registers and creates a topic', async () => {
    const jaas = jaasFile('broker-jaas.conf', CLIENT_JAAS);
    broker = await startBroker({
      overrides: { 'zookeeper.connect': `${zk.connect}/brook-sasl` },
      env: { KAFKA_OPTS: `-Xmx1g -Djava.security.auth.login.config=${jaas}` },
    });
    const admin = new Admin({ bootstrapServers: [broker.bootstrap] });
    try {
      const [created] = await admin.createTopics([{ topic: 'over-sasl-zk', numPartitions: 1 }]);
      assert.equal(created?.error, null);
    } finally {
      await admin.close();
    }
    const { opened } = await trySession({ username: 'other', password: 'other-secret' });
    assert.ok(opened.ok);
    try {
      assert.ok((await opened.value.get('/brook-sasl/brokers/ids/0')).ok);
      assert.ok((await opened.value.get('/brook-sasl/controller')).ok);
      assert.ok((await opened.value.get('/brook-sasl/brokers/topics/over-sasl-zk')).ok);
    } finally {
      await opened.value.close();
    }
  });
});

describe('ZooKeeper SASL settings', () => {
  it('read from KAFKA_OPTS as a Kafka broker does', () => {
    const jaas = jaasFile('settings-jaas.conf', `KafkaServer { x required; };\n${CLIENT_JAAS}`);
    assert.equal(jaasSection(CLIENT_JAAS, 'Server'), null);
    assert.equal(zooKeeperSaslLogin({}), null);
    assert.deepEqual(zooKeeperSaslLogin({ KAFKA_OPTS: `-Djava.security.auth.login.config=${jaas}` }), {
      username: 'brook',
      password: 'zk-secret',
      service: 'zookeeper',
    });
    const off = `-Djava.security.auth.login.config=${jaas} -Dzookeeper.sasl.client=false`;
    assert.equal(zooKeeperSaslLogin({ KAFKA_OPTS: off }), null);
    const other = `-Djava.security.auth.login.config=${jaas} -Dzookeeper.sasl.clientconfig=Missing`;
    assert.equal(zooKeeperSaslLogin({ KAFKA_OPTS: other }), null);
  });

  it('Kerberos and unreadable files stop startup, naming the property', () => {
    const kerberos = jaasFile(
      'krb.conf',
      'Client { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true; };',
    );
    assert.throws(
      () => zooKeeperSaslLogin({ KAFKA_OPTS: `-Djava.security.auth.login.config=${kerberos}` }),
      /java\.security\.auth\.login\.config.*DigestLoginModule/,
    );
    assert.throws(
      () => zooKeeperSaslLogin({ KAFKA_OPTS: `-Djava.security.auth.login.config=${join(dir, 'nope')}` }),
      /cannot read the JAAS file/,
    );
  });
});
