// CreateAcls, DescribeAcls and DeleteAcls through the wire against a broker with the ACL authorizer on: Kafka's
// filters (LITERAL, PREFIXED, ANY, MATCH), its validation errors, ALTER/DESCRIBE on the cluster required of the
// caller, SECURITY_DISABLED without an authorizer, the `brook acls` tool with kafka-acls.sh flags, and ACLs
// surviving a restart of the broker (embedded metadata store).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import {
  AclOperation,
  PatternType,
  PermissionType,
  ResourceType,
} from '../../src/security/authorizer/acl-types.js';
import { type AclBroker, addAcls, startAclBroker } from '../helpers/acl-broker.js';
import { run, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { WireClient } from '../helpers/wire-client.js';

const BROOK = resolve(import.meta.dirname, '../../../bin/brook');
const dataDir = mkdtempSync(join(tmpdir(), 'brook-acl-apis-'));
let b: AclBroker;

function describeFilter(overrides: Record<string, unknown> = {}) {
  return {
    resourceTypeFilter: ResourceType.ANY,
    resourceNameFilter: null,
    patternTypeFilter: PatternType.ANY,
    principalFilter: null,
    hostFilter: null,
    operation: AclOperation.ANY,
    permissionType: PermissionType.ANY,
    ...overrides,
  };
}

function brook(args: string[], input?: string) {
  return run(process.execPath, [BROOK, ...args, '--bootstrap-server', `127.0.0.1:${b.plainPort}`], {
    input,
    timeoutMs: 30_000,
  });
}

before(async () => {
  b = await startAclBroker({ dataDir, keepDataDir: true });
});

after(async () => {
  await b?.broker.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('ACL APIs', () => {
  it('creates, describes with LITERAL, PREFIXED, ANY and MATCH filters, and deletes', async () => {
    const admin = await b.admin();
    try {
      await addAcls(admin, [
        {
          resourceType: ResourceType.TOPIC,
          resourceName: 'orders',
          principal: 'User:alice',
          operation: AclOperation.READ,
        },
        {
          resourceType: ResourceType.TOPIC,
          resourceName: 'ord',
          patternType: PatternType.PREFIXED,
          principal: 'User:bob',
          operation: AclOperation.WRITE,
        },
        {
          resourceType: ResourceType.TOPIC,
          resourceName: '*',
          principal: 'User:carol',
          operation: AclOperation.DESCRIBE,
          host: '10.0.0.1',
        },
        {
          resourceType: ResourceType.GROUP,
          resourceName: 'billing',
          principal: 'User:alice',
          operation: AclOperation.READ,
          permissionType: PermissionType.DENY,
        },
      ]);
      const match = await admin.call(
        ApiKey.DESCRIBE_ACLS,
        3,
        describeFilter({
          resourceTypeFilter: ResourceType.TOPIC,
          resourceNameFilter: 'orders',
          patternTypeFilter: PatternType.MATCH,
        }),
      );
      assert.equal(match.errorCode, ErrorCode.NONE);
      assert.deepEqual(
        match.resources
          .map((r: { resourceName: string; patternType: number }) => `${r.resourceName}/${r.patternType}`)
          .sort(),
        ['*/3', 'ord/4', 'orders/3'],
      );
      const literal = await admin.call(
        ApiKey.DESCRIBE_ACLS,
        3,
        describeFilter({ resourceNameFilter: 'orders', patternTypeFilter: PatternType.LITERAL }),
      );
      assert.deepEqual(literal.resources, [
        {
          resourceType: ResourceType.TOPIC,
          resourceName: 'orders',
          patternType: PatternType.LITERAL,
          acls: [
            {
              principal: 'User:alice',
              host: '*',
              operation: AclOperation.READ,
              permissionType: PermissionType.ALLOW,
            },
          ],
        },
      ]);
      const byPrincipal = await admin.call(
        ApiKey.DESCRIBE_ACLS,
        1,
        describeFilter({ principalFilter: 'User:alice' }),
      );
      assert.equal(byPrincipal.resources.length, 2);
      const byHost = await admin.call(ApiKey.DESCRIBE_ACLS, 0, {
        ...describeFilter({ hostFilter: '10.0.0.1' }),
        patternTypeFilter: undefined,
      });
      assert.equal(byHost.resources.length, 1, 'v0 describes literal patterns');
      const deleted = await admin.call(ApiKey.DELETE_ACLS, 3, {
        filters: [
          describeFilter({
            resourceTypeFilter: ResourceType.TOPIC,
            resourceNameFilter: 'ord',
            patternTypeFilter: PatternType.PREFIXED,
          }),
        ],
      });
      assert.equal(deleted.filterResults[0].errorCode, ErrorCode.NONE);
      assert.equal(deleted.filterResults[0].matchingAcls.length, 1);
      assert.equal(deleted.filterResults[0].matchingAcls[0].principal, 'User:bob');
      const after = await admin.call(
        ApiKey.DESCRIBE_ACLS,
        3,
        describeFilter({ resourceTypeFilter: ResourceType.TOPIC }),
      );
      assert.deepEqual(after.resources.map((r: { resourceName: string }) => r.resourceName).sort(), [
        '*',
        'orders',
      ]);
    } finally {
      admin.close();
    }
  });

  it('v0 and v1 (literal patterns before v1), on every resource type Kafka names', async () => {
    const admin = await b.admin();
    try {
      const binding = (resourceType: number, resourceName: string, operation: number, patternType = 3) => ({
        resourceType,
        resourceName,
        resourcePatternType: patternType,
        principal: 'User:vic',
        host: '*',
        operation,
        permissionType: PermissionType.ALLOW,
      });
      // v0 carries no pattern type: LITERAL.
      const v0 = await admin.call(ApiKey.CREATE_ACLS, 0, {
        creations: [binding(ResourceType.TOPIC, 'v0-t', AclOperation.READ)],
      });
      assert.equal(v0.results[0].errorCode, ErrorCode.NONE);
      const v1 = await admin.call(ApiKey.CREATE_ACLS, 1, {
        creations: [
          binding(ResourceType.TOPIC, 'v0-t', AclOperation.WRITE, PatternType.PREFIXED),
          binding(ResourceType.GROUP, 'v1-g', AclOperation.READ),
          binding(ResourceType.CLUSTER, 'kafka-cluster', AclOperation.IDEMPOTENT_WRITE),
          binding(ResourceType.TRANSACTIONAL_ID, 'v1-tx', AclOperation.WRITE, PatternType.PREFIXED),
          binding(ResourceType.DELEGATION_TOKEN, 'token-1', AclOperation.DESCRIBE),
        ],
      });
      assert.deepEqual(
        v1.results.map((r: { errorCode: number }) => r.errorCode),
        [0, 0, 0, 0, 0],
      );
      const vic = async (version: number) =>
        (
          await admin.call(ApiKey.DESCRIBE_ACLS, version, {
            ...describeFilter({ principalFilter: 'User:vic' }),
            ...(version === 0 ? { resourceTypeFilter: ResourceType.ANY, patternTypeFilter: undefined } : {}),
          })
        ).resources
          .map(
            (r: { resourceType: number; resourceName: string; patternType?: number }) =>
              `${r.resourceType}/${r.resourceName}${version === 0 ? '' : `/${r.patternType}`}`,
          )
          .sort();
      assert.deepEqual(
        await vic(1),
        [
          `${ResourceType.TOPIC}/v0-t/${PatternType.LITERAL}`,
          `${ResourceType.TOPIC}/v0-t/${PatternType.PREFIXED}`,
          `${ResourceType.GROUP}/v1-g/${PatternType.LITERAL}`,
          `${ResourceType.CLUSTER}/kafka-cluster/${PatternType.LITERAL}`,
          `${ResourceType.TRANSACTIONAL_ID}/v1-tx/${PatternType.PREFIXED}`,
          `${ResourceType.DELEGATION_TOKEN}/token-1/${PatternType.LITERAL}`,
        ].sort(),
      );
      // v0 sees literal patterns only.
      assert.deepEqual(
        await vic(0),
        [
          `${ResourceType.TOPIC}/v0-t`,
          `${ResourceType.GROUP}/v1-g`,
          `${ResourceType.CLUSTER}/kafka-cluster`,
          `${ResourceType.DELEGATION_TOKEN}/token-1`,
        ].sort(),
      );
      // A v0 DeleteAcls filter matches literal patterns: the prefixed v0-t stays.
      const deleted = await admin.call(ApiKey.DELETE_ACLS, 0, {
        filters: [
          {
            ...describeFilter({ resourceTypeFilter: ResourceType.TOPIC, resourceNameFilter: 'v0-t' }),
            patternTypeFilter: undefined,
          },
        ],
      });
      assert.equal(deleted.filterResults[0].errorCode, ErrorCode.NONE);
      assert.deepEqual(
        deleted.filterResults[0].matchingAcls.map((m: { operation: number }) => m.operation),
        [AclOperation.READ],
      );
      const rest = await admin.call(ApiKey.DELETE_ACLS, 1, {
        filters: [describeFilter({ principalFilter: 'User:vic' })],
      });
      assert.equal(rest.filterResults[0].matchingAcls.length, 5);
      assert.deepEqual(await vic(1), []);
    } finally {
      admin.close();
    }
  });

  it('answers INVALID_REQUEST for bindings and filters Kafka refuses', async () => {
    const admin = await b.admin();
    try {
      const base = {
        resourceType: ResourceType.TOPIC,
        resourceName: 't',
        resourcePatternType: PatternType.LITERAL,
        principal: 'User:x',
        host: '*',
        operation: AclOperation.READ,
        permissionType: PermissionType.ALLOW,
      };
      const response = await admin.call(ApiKey.CREATE_ACLS, 3, {
        creations: [
          { ...base, resourcePatternType: PatternType.MATCH },
          { ...base, resourceType: ResourceType.CLUSTER, resourceName: 'other' },
          { ...base, resourceName: '' },
          { ...base, principal: 'alice' },
          { ...base, operation: AclOperation.ANY },
          { ...base, permissionType: PermissionType.ANY },
          {
            ...base,
            resourceType: ResourceType.CLUSTER,
            resourceName: 'kafka-cluster',
            operation: AclOperation.CLUSTER_ACTION,
          },
        ],
      });
      assert.deepEqual(
        response.results.map((r: { errorCode: number }) => r.errorCode),
        [42, 42, 42, 42, 42, 42, 0],
      );
      const bad = await admin.call(
        ApiKey.DESCRIBE_ACLS,
        3,
        describeFilter({ operation: AclOperation.UNKNOWN }),
      );
      assert.equal(bad.errorCode, ErrorCode.INVALID_REQUEST);
    } finally {
      admin.close();
    }
  });

  it('needs ALTER on the cluster to create and delete, DESCRIBE to describe', async () => {
    const alice = await b.as('alice');
    const admin = await b.admin();
    try {
      const creation = {
        resourceType: ResourceType.TOPIC,
        resourceName: 'mine',
        resourcePatternType: PatternType.LITERAL,
        principal: 'User:alice',
        host: '*',
        operation: AclOperation.ALL,
        permissionType: PermissionType.ALLOW,
      };
      const refused = await alice.call(ApiKey.CREATE_ACLS, 2, { creations: [creation] });
      assert.equal(refused.results[0].errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      const described = await alice.call(ApiKey.DESCRIBE_ACLS, 2, describeFilter());
      assert.equal(described.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      const deleted = await alice.call(ApiKey.DELETE_ACLS, 2, { filters: [describeFilter()] });
      assert.equal(deleted.filterResults[0].errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      // ALTER on the cluster lets alice manage ACLs, and implies DESCRIBE.
      await addAcls(admin, [
        {
          resourceType: ResourceType.CLUSTER,
          resourceName: 'kafka-cluster',
          principal: 'User:alice',
          operation: AclOperation.ALTER,
        },
      ]);
      const created = await alice.call(ApiKey.CREATE_ACLS, 2, { creations: [creation] });
      assert.equal(created.results[0].errorCode, ErrorCode.NONE);
      const visible = await alice.call(
        ApiKey.DESCRIBE_ACLS,
        2,
        describeFilter({ resourceNameFilter: 'mine' }),
      );
      assert.equal(visible.errorCode, ErrorCode.NONE);
      assert.equal(visible.resources.length, 1);
    } finally {
      alice.close();
      admin.close();
    }
  });

  it('brook acls adds, lists and removes with kafka-acls.sh flags', async () => {
    const added = await brook([
      'acls',
      '--add',
      '--allow-principal',
      'User:dave',
      '--operation',
      'Read',
      '--operation',
      'Describe',
      '--topic',
      'cli-t',
      '--group',
      'cli-g',
    ]);
    assert.equal(added.code, 0, added.stderr);
    assert.match(
      added.stdout,
      /Adding ACLs for resource `ResourcePattern\(resourceType=TOPIC, name=cli-t, patternType=LITERAL\)`/,
    );
    assert.match(added.stdout, /\(principal=User:dave, host=\*, operation=READ, permissionType=ALLOW\)/);
    const producer = await brook([
      'acls',
      '--add',
      '--producer',
      '--allow-principal',
      'User:erin',
      '--topic',
      'cli-',
      '--resource-pattern-type',
      'prefixed',
      '--transactional-id',
      'tx-',
      '--idempotent',
    ]);
    assert.equal(producer.code, 0, producer.stderr);
    const consumer = await brook([
      'acls',
      '--add',
      '--consumer',
      '--allow-principal',
      'User:erin',
      '--deny-principal',
      'User:frank',
      '--topic',
      'cli-t',
      '--group',
      'cli-g',
    ]);
    assert.equal(consumer.code, 0, consumer.stderr);
    const listed = await brook([
      'acls',
      '--list',
      '--topic',
      'cli-t',
      '--resource-pattern-type',
      'match',
      '--json',
    ]);
    assert.equal(listed.code, 0, listed.stderr);
    const rows = JSON.parse(listed.stdout) as {
      name: string;
      principal: string;
      operation: string;
      permissionType: string;
      patternType: string;
    }[];
    const text = rows
      .map((r) => `${r.name}/${r.patternType} ${r.principal} ${r.operation} ${r.permissionType}`)
      .sort();
    for (const expected of [
      'cli-/PREFIXED User:erin WRITE ALLOW',
      'cli-/PREFIXED User:erin CREATE ALLOW',
      'cli-t/LITERAL User:dave READ ALLOW',
      'cli-t/LITERAL User:erin READ ALLOW',
      'cli-t/LITERAL User:frank READ DENY',
    ]) {
      assert.ok(text.includes(expected), `${expected} in ${text.join('\n')}`);
    }
    const cluster = await brook(['acls', '--list', '--cluster', '--principal', 'User:erin']);
    assert.match(cluster.stdout, /operation=IDEMPOTENT_WRITE, permissionType=ALLOW/);
    const txn = await brook([
      'acls',
      '--list',
      '--transactional-id',
      'tx-',
      '--resource-pattern-type',
      'prefixed',
    ]);
    assert.match(txn.stdout, /User:erin, host=\*, operation=WRITE/);
    // Without --force the tool asks; "n" leaves the ACLs alone.
    const kept = await brook(['acls', '--remove', '--topic', 'cli-t'], 'n\n');
    assert.equal(kept.code, 0, kept.stderr);
    const removeOne = await brook([
      'acls',
      '--remove',
      '--force',
      '--allow-principal',
      'User:dave',
      '--operation',
      'Read',
      '--topic',
      'cli-t',
    ]);
    assert.equal(removeOne.code, 0, removeOne.stderr);
    const afterOne = JSON.parse((await brook(['acls', '--list', '--topic', 'cli-t', '--json'])).stdout) as {
      principal: string;
      operation: string;
    }[];
    assert.ok(!afterOne.some((r) => r.principal === 'User:dave' && r.operation === 'READ'));
    assert.ok(afterOne.some((r) => r.principal === 'User:dave' && r.operation === 'DESCRIBE'));
    const removeAll = await brook(['acls', '--remove', '--force', '--topic', 'cli-t']);
    assert.equal(removeAll.code, 0, removeAll.stderr);
    const empty = JSON.parse((await brook(['acls', '--list', '--topic', 'cli-t', '--json'])).stdout);
    assert.deepEqual(empty, []);
    const badOp = await brook([
      'acls',
      '--add',
      '--allow-principal',
      'User:x',
      '--operation',
      'Write',
      '--group',
      'g',
    ]);
    assert.equal(badOp.code, 1);
    assert.match(badOp.stderr, /ResourceType GROUP only supports operations/);
  });

  it('keeps ACLs across a restart', async () => {
    const admin = await b.admin();
    await addAcls(admin, [
      {
        resourceType: ResourceType.TOPIC,
        resourceName: 'durable',
        patternType: PatternType.PREFIXED,
        principal: 'User:alice',
        operation: AclOperation.READ,
      },
    ]);
    admin.close();
    await b.broker.stop();
    b = await startAclBroker({ dataDir, keepDataDir: true });
    const again = await b.admin();
    try {
      const found = await again.call(
        ApiKey.DESCRIBE_ACLS,
        3,
        describeFilter({ resourceNameFilter: 'durable' }),
      );
      assert.equal(found.resources.length, 1);
      assert.equal(found.resources[0].patternType, PatternType.PREFIXED);
    } finally {
      again.close();
    }
  });
});

describe('without an authorizer', () => {
  it('answers SECURITY_DISABLED, as Kafka does', async () => {
    const plain = await startBroker();
    const client = await WireClient.connect('127.0.0.1', plain.port);
    try {
      const described = await client.call(ApiKey.DESCRIBE_ACLS, 3, describeFilter());
      assert.equal(described.errorCode, ErrorCode.SECURITY_DISABLED);
    } finally {
      client.close();
      await plain.stop();
    }
  });
});

describe('brook.authorizer.log.level', () => {
  it('DEBUG writes allowed checks too; OFF writes none, not even denials', async () => {
    for (const level of ['DEBUG', 'OFF'] as const) {
      const broker = await startAclBroker({ extra: { 'brook.authorizer.log.level': level } });
      const alice = await broker.as('alice');
      const admin = await broker.admin();
      try {
        const refused = await alice.call(ApiKey.DESCRIBE_ACLS, 3, describeFilter());
        assert.equal(refused.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
        const allowed = await admin.call(ApiKey.DESCRIBE_ACLS, 3, describeFilter());
        assert.equal(allowed.errorCode, ErrorCode.NONE);
        const denied =
          'Principal = User:alice is Denied Operation = Describe from host = 127.0.0.1 on resource = Cluster:LITERAL:kafka-cluster for request = DescribeAcls';
        const allowedLine =
          'Principal = User:ANONYMOUS is Allowed Operation = Describe from host = 127.0.0.1 on resource = Cluster:LITERAL:kafka-cluster for request = DescribeAcls';
        if (level === 'DEBUG') {
          // Lines reach the test through the broker's stderr pipe, possibly after the answer.
          await waitUntil(
            () => broker.broker.log().includes(denied) && broker.broker.log().includes(allowedLine),
            30_000,
            () => broker.broker.log(),
          );
          const log = broker.broker.log();
          assert.match(
            log,
            new RegExp(
              ` DEBUG kafka\\.authorizer\\.logger: ${allowedLine.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
            ),
          );
        } else {
          // Everything the broker wrote has been read once it has exited.
          alice.close();
          admin.close();
          await broker.broker.stop();
          const log = broker.broker.log();
          assert.ok(log.includes('INFO'), 'the log was captured');
          assert.ok(!log.includes('is Denied') && !log.includes('is Allowed'), log);
        }
      } finally {
        alice.close();
        admin.close();
        await broker.broker.stop();
      }
    }
  });
});
