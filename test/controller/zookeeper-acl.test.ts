// zookeeper.set.acl=true, as a Kafka broker applies it, against Debian's ZooKeeper offering SASL DIGEST-MD5 without
// requiring it: the broker (user brook, a JAAS Client section in KAFKA_OPTS) creates every znode with all
// permissions for itself and read for everyone, except under /config/users, /config/brokers and
// /delegation_token/tokens (creator only) and /consumers (open); an unauthenticated session and another
// authenticated user can read what is world-readable but write nothing; the broker keeps working. Without an
// authenticated ZooKeeper identity, zookeeper.set.acl=true stops startup with one line, as Kafka refuses it.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import { kafkaNodeAcls, type ZooKeeperAcl } from '../../src/controller/store/zookeeper-acls.js';
import { connectZooKeeper, readZooKeeperAcl } from '../../src/controller/store/zookeeper-store.js';
import { digestExchanges } from '../../src/security/zookeeper-sasl.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { createTopicOn } from '../helpers/test-cluster.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';
import { assertKafkaNodeAcls, codeOf, WORLD_ALL, WORLD_READ } from './zookeeper-acl-checks.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const CHROOT = '/kafka-acl';

const OWNER_ALL: ZooKeeperAcl = { perms: 31, scheme: 'sasl', id: 'brook' };

describe("Kafka's secure ACL rules by path", () => {
  it('open to everyone without zookeeper.set.acl', () => {
    for (const path of ['/brokers/ids/0', '/config/users/alice', '/consumers']) {
      assert.deepEqual(kafkaNodeAcls(false, path), [WORLD_ALL]);
    }
  });

  it('creator-all and world-read, creator-only on sensitive roots, /consumers open', () => {
    const creator = { perms: 31, scheme: 'auth', id: '' };
    const readable = [creator, WORLD_READ];
    for (const path of [
      '/brokers/ids/0',
      '/brokers/topics/t/partitions/0/state',
      '/controller',
      '/controller_epoch',
      '/config/topics/t',
      '/config/clients/c',
      '/config/changes/config_change_0000000000',
      '/admin/delete_topics',
      '/delegation_token',
      '/kafka-acl',
      '/consumers/group',
    ]) {
      assert.deepEqual(kafkaNodeAcls(true, path), readable, path);
    }
    for (const path of [
      '/config/users',
      '/config/users/alice',
      '/config/brokers',
      '/config/brokers/<default>',
      '/delegation_token/tokens',
      '/delegation_token/tokens/token-1',
    ]) {
      assert.deepEqual(kafkaNodeAcls(true, path), [creator], path);
    }
    assert.deepEqual(kafkaNodeAcls(true, '/consumers'), [WORLD_ALL]);
  });
});

describe('a broker with zookeeper.set.acl=true', () => {
  const dir = mkdtempSync(join(tmpdir(), 'brook-zk-acl-'));
  const jaas = join(dir, 'jaas.conf');
  let zk: TestZooKeeper;
  let broker: BrokerProcess | undefined;
  const sessions: CoordinationStore[] = [];

  /** A session under the chroot: as a SASL user, or unauthenticated (null). */
  async function session(login: { username: string; password: string } | null): Promise<CoordinationStore> {
    const opened = await connectZooKeeper({
      connect: `${zk.connect}${CHROOT}`,
      sessionTimeoutMs: 10_000,
      connectionTimeoutMs: 10_000,
      sasl: login === null ? null : digestExchanges({ ...login, service: 'zookeeper' }),
    });
    assert.ok(opened.ok, `no ZooKeeper session: ${opened.ok ? '' : opened.code}`);
    sessions.push(opened.value);
    return opened.value;
  }

  before(async () => {
    zk = await startTestZooKeeper({
      saslUsers: { brook: 'zk-secret', other: 'other-secret' },
      saslOptional: true,
    });
    writeFileSync(
      jaas,
      'Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n  username="brook"\n  password="zk-secret";\n};\n',
    );
    broker = await startBroker({
      overrides: { 'zookeeper.connect': `${zk.connect}${CHROOT}`, 'zookeeper.set.acl': true },
      env: { KAFKA_OPTS: `-Djava.security.auth.login.config=${jaas}` },
    });
    await createTopicOn(broker, 'secured', { numPartitions: 1, replicationFactor: 1 });
  });

  after(async () => {
    for (const s of sessions) await s.close();
    await broker?.stop();
    await zk?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives the nodes it creates Kafka's ACLs, read back with getACL", async () => {
    const owner = await session({ username: 'brook', password: 'zk-secret' });
    await assertKafkaNodeAcls(owner, OWNER_ALL, ['/admin/delete_topics', '/latest_producer_id_block']);
  });

  it('the chroot the broker created carries them too', async () => {
    const opened = await connectZooKeeper({
      connect: zk.connect,
      sessionTimeoutMs: 10_000,
      sasl: digestExchanges({ username: 'brook', password: 'zk-secret', service: 'zookeeper' }),
    });
    assert.ok(opened.ok);
    sessions.push(opened.value);
    const read = await readZooKeeperAcl(opened.value, CHROOT);
    assert.ok(read.ok);
    assert.deepEqual(read.value, [OWNER_ALL, WORLD_READ]);
  });

  it('an unauthenticated client reads what is world-readable and writes nothing', async () => {
    const anonymous = await session(null);
    assert.equal(codeOf(await anonymous.get('/brokers/topics/secured')), 'ok');
    assert.equal(codeOf(await anonymous.set('/brokers/topics/secured', Buffer.from('{}'), -1)), 'NOAUTH');
    assert.equal(codeOf(await anonymous.set('/controller', Buffer.from('{}'), -1)), 'NOAUTH');
    assert.equal(codeOf(await anonymous.delete('/brokers/topics/secured/partitions/0/state', -1)), 'NOAUTH');
    assert.equal(codeOf(await anonymous.create('/admin/delete_topics/secured', Buffer.alloc(0))), 'NOAUTH');
    assert.equal(
      codeOf(
        await anonymous.create('/config/changes/config_change_', Buffer.alloc(0), 'persistent_sequential'),
      ),
      'NOAUTH',
    );
    assert.equal(codeOf(await anonymous.get('/config/users')), 'NOAUTH');
    assert.equal(codeOf(await anonymous.children('/config/brokers')), 'NOAUTH');
    assert.equal(codeOf(await anonymous.create('/consumers/old-group', Buffer.alloc(0))), 'ok');
    // Nothing the broker wrote was changed.
    const topic = await anonymous.get('/brokers/topics/secured');
    assert.ok(topic.ok);
    assert.equal(topic.value.stat.version, 0);
  });

  it('another authenticated identity cannot write either', async () => {
    const other = await session({ username: 'other', password: 'other-secret' });
    assert.equal(codeOf(await other.get('/brokers/ids/0')), 'ok');
    assert.equal(codeOf(await other.set('/brokers/topics/secured', Buffer.from('{}'), -1)), 'NOAUTH');
    assert.equal(codeOf(await other.get('/config/users')), 'NOAUTH');
  });

  it('the broker still creates topics and serves records', async () => {
    assert.ok(broker);
    await createTopicOn(broker, 'secured-later', { numPartitions: 1, replicationFactor: 1 });
    const producer = new Producer({ bootstrapServers: [broker.bootstrap] });
    try {
      await producer.send({ topic: 'secured-later', value: Buffer.from('through secure ACLs') });
    } finally {
      await producer.close();
    }
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      const records = await readPartition(client, 'secured-later', 0);
      assert.deepEqual(
        records.map((r) => r.value?.toString()),
        ['through secure ACLs'],
      );
    } finally {
      client.close();
    }
    const owner = await session({ username: 'brook', password: 'zk-secret' });
    const read = await readZooKeeperAcl(owner, '/brokers/topics/secured-later');
    assert.ok(read.ok);
    assert.deepEqual(read.value, [OWNER_ALL, WORLD_READ]);
  });

  it('without an authenticated ZooKeeper identity, startup stops with one line naming the key', async () => {
    const result = await run(
      process.execPath,
      [
        join(REPO_ROOT, 'bin/brook'),
        'server',
        '--override',
        `zookeeper.connect=${zk.connect}/kafka-acl-refused`,
        '--override',
        'zookeeper.set.acl=true',
        '--override',
        `log.dirs=${join(dir, 'refused-logs')}`,
        '--override',
        'listeners=PLAINTEXT://127.0.0.1:0',
      ],
      { env: { ...process.env, KAFKA_OPTS: '' }, timeoutMs: 60_000 },
    );
    assert.equal(result.code, 2, result.stderr);
    const lines = result.stderr.trim().split('\n');
    assert.equal(lines.length, 1, result.stderr);
    assert.match(lines[0]!, /zookeeper\.set\.acl.*authenticated ZooKeeper session/);
  });
});
