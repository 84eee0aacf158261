// A broker cut off ZooKeeper until its session expires misses the ACL change notifications of that time; with a
// new session it reads every ACL again. An ACL deleted meanwhile (a grant revoked through another broker or
// kafka-acls.sh) must be gone from it as well, as from a Kafka broker, which replays the missed notifications
// (kept 15 minutes) and rereads each resource they name: a revoked grant must not stay in force on one broker.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectZooKeeper } from '../../src/controller/store/zookeeper-store.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { AclStore } from '../../src/security/authorizer/acl-store.js';
import {
  AclOperation as Op,
  PatternType,
  PermissionType,
  ResourceType as RT,
} from '../../src/security/authorizer/acl-types.js';
import { TcpProxy } from '../controller/store/tcp-proxy.js';
import { addAcls, saslOverrides, topicErrorFor } from '../helpers/acl-broker.js';
import { waitFor } from '../helpers/cluster.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { sleep } from '../helpers/wait.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';

const SESSION_TIMEOUT_MS = 3000;
let cluster: TestCluster;
let proxy: TcpProxy;
let saslPort: number;

function describeAs(user: 'alice' | 'bob', topic: string): Promise<number> {
  return topicErrorFor(saslPort, user, topic);
}

before(async () => {
  const plainPort = await freePort();
  saslPort = await freePort();
  cluster = await startCluster({
    brokers: 1,
    overrides: { ...saslOverrides(plainPort, saslPort), 'zookeeper.session.timeout.ms': SESSION_TIMEOUT_MS },
    brokerZookeeperConnect: async (zk) => {
      proxy = await TcpProxy.start(zk.port);
      return `127.0.0.1:${proxy.port}`;
    },
  });
});

after(async () => {
  await cluster?.stop();
  await proxy?.close();
});

describe('ACLs after a ZooKeeper session expiry', () => {
  it('an ACL deleted while the broker had no session is gone from it once it has a new one', async () => {
    const broker = cluster.brokers[0]!;
    const admin = await WireClient.connect('127.0.0.1', broker.port);
    try {
      await createTopic(admin, 'exp-t');
      await addAcls(admin, [
        { resourceType: RT.TOPIC, resourceName: 'exp-t', principal: 'User:alice', operation: Op.DESCRIBE },
      ]);
    } finally {
      admin.close();
    }
    assert.equal(await describeAs('alice', 'exp-t'), ErrorCode.NONE);

    const connected = await connectZooKeeper({ connect: cluster.zk.connect, sessionTimeoutMs: 6000 });
    assert.ok(connected.ok);
    const zk = connected.value;
    proxy.cut();
    try {
      // What another broker writes when asked to delete alice's grant (the resource's last ACL, so its node
      // goes) and to give bob one on a prefix: the nodes and their notifications, which this broker cannot see.
      const acls = new AclStore(zk);
      await acls.update(
        { resourceType: RT.TOPIC, name: 'exp-t', patternType: PatternType.LITERAL },
        () => [],
      );
      await acls.update({ resourceType: RT.TOPIC, name: 'exp-', patternType: PatternType.PREFIXED }, () => [
        { principal: 'User:bob', host: '*', operation: Op.DESCRIBE, permissionType: PermissionType.ALLOW },
      ]);
      await sleep(SESSION_TIMEOUT_MS + 2000);
    } finally {
      proxy.restore();
      await zk.close();
    }
    await waitFor(
      'the broker registered again with a new session',
      async () => (/registered again with broker epoch/.test(broker.log()) ? true : undefined),
      30_000,
    );
    assert.equal(await describeAs('bob', 'exp-t'), ErrorCode.NONE, 'the grant made meanwhile applies');
    assert.equal(
      await describeAs('alice', 'exp-t'),
      ErrorCode.TOPIC_AUTHORIZATION_FAILED,
      'the grant revoked meanwhile no longer applies',
    );
  });
});
