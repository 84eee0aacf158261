// What the two zookeeper.set.acl tests (SASL digest and x509 identities) check the same way: the ACLs a broker
// gives the nodes it creates, read back with getACL, for whatever identity the broker logged in with.
import assert from 'node:assert/strict';
import type { CoordinationStore, StoreResult } from '../../src/controller/store/store.js';
import type { ZooKeeperAcl } from '../../src/controller/store/zookeeper-acls.js';
import { readZooKeeperAcl } from '../../src/controller/store/zookeeper-store.js';

export const WORLD_READ: ZooKeeperAcl = { perms: 1, scheme: 'world', id: 'anyone' };
export const WORLD_ALL: ZooKeeperAcl = { perms: 31, scheme: 'world', id: 'anyone' };

/** 'ok' or the store's error code: one string to compare, whatever the operation returned. */
export function codeOf(result: StoreResult<unknown>): string {
  return result.ok ? 'ok' : result.code;
}

/** The nodes every test broker with a topic named `secured` has created, with creator-all and world-read. */
const READABLE_NODES = [
  '/brokers/ids/0',
  '/brokers/topics/secured',
  '/brokers/topics/secured/partitions/0/state',
  '/controller',
  '/controller_epoch',
  '/config/topics/secured',
];

/**
 * Asserts Kafka's secure ACLs on the broker's nodes, as `session` reads them: all permissions for `owner` (the
 * broker's identity) and read for the world, owner-only under /config/users and /config/brokers, /consumers open
 * to all. `moreReadableNodes` are further nodes expected to carry creator-all and world-read.
 */
export async function assertKafkaNodeAcls(
  session: CoordinationStore,
  owner: ZooKeeperAcl,
  moreReadableNodes: readonly string[] = [],
): Promise<void> {
  const aclOf = async (path: string) => {
    const read = await readZooKeeperAcl(session, path);
    assert.ok(read.ok, `getACL ${path}: ${codeOf(read)}`);
    return read.value;
  };
  for (const path of [...READABLE_NODES, ...moreReadableNodes]) {
    assert.deepEqual(await aclOf(path), [owner, WORLD_READ], path);
  }
  for (const path of ['/config/users', '/config/brokers']) {
    assert.deepEqual(await aclOf(path), [owner], path);
  }
  assert.deepEqual(await aclOf('/consumers'), [WORLD_ALL]);
}
