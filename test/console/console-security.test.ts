// The console follows the cluster's security settings: against a broker with the ACL authorizer and a
// SASL_PLAINTEXT listener, `brook console --command-config` logs in as the user its properties name, sees what that
// user may see (topics it may describe, not the others), lists the cluster's ACLs, and a wrong password is an
// error answered at once rather than a page that hangs.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import {
  AclOperation,
  PatternType,
  PermissionType,
  ResourceType,
} from '../../src/security/authorizer/acl-types.js';
import { ACL_USERS, type AclBroker, startAclBroker } from '../helpers/acl-broker.js';
import { type ConsoleProcess, call, startConsole } from './console-process.js';

function clientProperties(dir: string, name: string, user: string, password: string): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    [
      'security.protocol=SASL_PLAINTEXT',
      'sasl.mechanism=PLAIN',
      `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="${user}" password="${password}";`,
    ].join('\n'),
  );
  return path;
}

function allow(principal: string, resourceType: number, name: string, operation: number) {
  return {
    pattern: { resourceType, name, patternType: PatternType.LITERAL },
    entry: { principal, host: '*', operation, permissionType: PermissionType.ALLOW },
  };
}

describe('console with SASL and ACLs', () => {
  let acl: AclBroker | undefined;
  let dir = '';
  const consoles: ConsoleProcess[] = [];

  before(async () => {
    acl = await startAclBroker({ extra: { 'num.partitions': 1 } });
    dir = mkdtempSync(join(tmpdir(), 'brook-console-sasl-'));
    // The PLAINTEXT listener's User:ANONYMOUS is the super user: set up topics and ACLs through it.
    const admin = new Admin({ bootstrapServers: `127.0.0.1:${acl.plainPort}` });
    try {
      await admin.createTopics([{ topic: 'alice-topic' }, { topic: 'secret-topic' }]);
      const errors = await admin.createAcls([
        allow('User:alice', ResourceType.CLUSTER, 'kafka-cluster', AclOperation.DESCRIBE),
        allow('User:alice', ResourceType.TOPIC, 'alice-topic', AclOperation.DESCRIBE),
      ]);
      assert.deepEqual(errors, [null, null]);
    } finally {
      await admin.close();
    }
  });
  after(async () => {
    for (const c of consoles) await c.stop();
    await acl?.broker.stop();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  test("logs in with --command-config and shows what the user may see, and the cluster's ACLs", async () => {
    const web = await startConsole([
      '--bootstrap-server',
      `127.0.0.1:${acl!.saslPort}`,
      '--command-config',
      clientProperties(dir, 'alice.properties', 'alice', ACL_USERS.alice),
    ]);
    consoles.push(web);
    const topics = await call(web.url, 'GET', '/topics');
    assert.equal(topics.status, 200, JSON.stringify(topics.body));
    assert.deepEqual(
      topics.body.map((t: { name: string }) => t.name),
      ['alice-topic'],
    );
    const acls = await call(web.url, 'GET', '/acls');
    assert.equal(acls.status, 200, JSON.stringify(acls.body));
    assert.equal(acls.body.enabled, true);
    assert.deepEqual(
      acls.body.acls
        .map((a: { principal: string; operation: string; resourceType: string; resourceName: string }) =>
          [a.principal, a.operation, a.resourceType, a.resourceName].join(' '),
        )
        .sort(),
      ['User:alice Describe Cluster kafka-cluster', 'User:alice Describe Topic alice-topic'],
    );
    const refused = await call(web.url, 'POST', '/topics', { name: 'alice-made' });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'TOPIC_AUTHORIZATION_FAILED');
  });

  test('a wrong password is an error at once, not a hang', async () => {
    const web = await startConsole([
      '--bootstrap-server',
      `127.0.0.1:${acl!.saslPort}`,
      '--command-config',
      clientProperties(dir, 'wrong.properties', 'alice', 'not-her-password'),
    ]);
    consoles.push(web);
    const started = Date.now();
    const answer = await call(web.url, 'GET', '/cluster');
    assert.ok(answer.status >= 500, JSON.stringify(answer.body));
    assert.match(answer.body.error, /SASL_AUTHENTICATION_FAILED|authentication/i);
    assert.ok(Date.now() - started < 15_000);
  });
});
