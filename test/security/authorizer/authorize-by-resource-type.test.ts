// Kafka's authorizeByResourceType (what an idempotent producer without IDEMPOTENT_WRITE needs: WRITE on some
// topic), case by case as AclAuthorizer decides it: wildcard DENY and ALLOW, prefixes dominated by DENYed
// prefixes, literals DENYed literally or by prefix, other principals and hosts, ALL, and
// allow.everyone.if.no.acl.found through the made-up resource name.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AclCache } from '../../../src/security/authorizer/acl-cache.js';
import {
  AclOperation as Op,
  PatternType,
  PermissionType,
  ResourceType,
} from '../../../src/security/authorizer/acl-types.js';

type Acl = [
  pattern: 'L' | 'P',
  name: string,
  permission: 'ALLOW' | 'DENY',
  op?: number,
  principal?: string,
  host?: string,
];

function cacheOf(acls: readonly Acl[]): AclCache {
  const cache = new AclCache();
  const groups = new Map<string, { patternType: number; name: string; entries: object[] }>();
  for (const [p, name, permission, op = Op.WRITE, principal = 'User:alice', host = '*'] of acls) {
    const patternType = p === 'L' ? PatternType.LITERAL : PatternType.PREFIXED;
    const key = `${patternType}:${name}`;
    const group = groups.get(key) ?? { patternType, name, entries: [] };
    group.entries.push({ principal, host, operation: op, permissionType: PermissionType[permission] });
    groups.set(key, group);
  }
  for (const g of groups.values()) {
    cache.set(
      { resourceType: ResourceType.TOPIC, name: g.name, patternType: g.patternType },
      g.entries as never,
    );
  }
  return cache;
}

function writeAny(
  acls: readonly Acl[],
  allowIfNoAcl = false,
  principal = 'User:alice',
  host = '10.0.0.1',
): boolean {
  return cacheOf(acls).authorizeAny(principal, host, Op.WRITE, ResourceType.TOPIC, allowIfNoAcl);
}

describe("authorizeByResourceType as Kafka's AclAuthorizer", () => {
  it('no ACLs: allow.everyone.if.no.acl.found decides', () => {
    assert.equal(writeAny([]), false);
    assert.equal(writeAny([], true), true);
    // ACLs on other topics only: the made-up name has none, so the setting still lets it through, as in Kafka.
    assert.equal(writeAny([['L', 'orders', 'ALLOW', Op.READ, 'User:bob']], true), true);
  });

  it('an ALLOW on a literal or prefix grants; READ does not; ALL does', () => {
    assert.equal(writeAny([['L', 'orders', 'ALLOW']]), true);
    assert.equal(writeAny([['P', 'ord', 'ALLOW']]), true);
    assert.equal(writeAny([['L', 'orders', 'ALLOW', Op.READ]]), false);
    assert.equal(writeAny([['L', 'orders', 'ALLOW', Op.ALL]]), true);
  });

  it('other principals and hosts do not count; User:* and host * do', () => {
    assert.equal(writeAny([['L', 'orders', 'ALLOW', Op.WRITE, 'User:bob']]), false);
    assert.equal(writeAny([['L', 'orders', 'ALLOW', Op.WRITE, 'User:alice', '10.0.0.2']]), false);
    assert.equal(writeAny([['L', 'orders', 'ALLOW', Op.WRITE, 'User:*', '10.0.0.1']]), true);
  });

  it('a DENY of the literal * refuses everything; an ALLOW of * grants', () => {
    assert.equal(
      writeAny([
        ['L', 'orders', 'ALLOW'],
        ['L', '*', 'DENY'],
      ]),
      false,
    );
    assert.equal(writeAny([['L', '*', 'ALLOW']]), true);
    assert.equal(
      writeAny([
        ['L', '*', 'ALLOW'],
        ['L', '*', 'DENY', Op.ALL, 'User:*'],
      ]),
      false,
    );
  });

  it('a literal DENYed literally or by a prefix that starts it does not count', () => {
    assert.equal(
      writeAny([
        ['L', 'orders', 'ALLOW'],
        ['L', 'orders', 'DENY'],
      ]),
      false,
    );
    assert.equal(
      writeAny([
        ['L', 'orders', 'ALLOW'],
        ['P', 'ord', 'DENY'],
      ]),
      false,
    );
    assert.equal(
      writeAny([
        ['L', 'orders', 'ALLOW'],
        ['P', 'pay', 'DENY'],
      ]),
      true,
    );
    // A DENY on another literal leaves this one.
    assert.equal(
      writeAny([
        ['L', 'orders', 'ALLOW'],
        ['L', 'payments', 'DENY'],
      ]),
      true,
    );
  });

  it('a prefix dominated by a DENYed prefix does not count; a DENY on a longer prefix does not dominate it', () => {
    assert.equal(
      writeAny([
        ['P', 'orders-eu', 'ALLOW'],
        ['P', 'orders', 'DENY'],
      ]),
      false,
    );
    assert.equal(
      writeAny([
        ['P', 'orders', 'ALLOW'],
        ['P', 'orders-eu', 'DENY'],
      ]),
      true,
    );
    // A literal DENY does not dominate a prefix.
    assert.equal(
      writeAny([
        ['P', 'orders', 'ALLOW'],
        ['L', 'orders', 'DENY'],
      ]),
      true,
    );
  });

  it("another principal's DENY does not take this one's ALLOW away", () => {
    assert.equal(
      writeAny([
        ['L', 'orders', 'ALLOW'],
        ['P', 'ord', 'DENY', Op.WRITE, 'User:bob'],
      ]),
      true,
    );
  });
});
