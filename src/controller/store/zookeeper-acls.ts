// The ACLs a Kafka broker gives the znodes it creates (Kafka's ZkData.defaultAcls), chosen by path.
//
// With zookeeper.set.acl=false every node is open to everyone (world:anyone, all permissions), ZooKeeper's
// OPEN_ACL_UNSAFE. With true, the identity the broker authenticated with (the `auth` scheme, which ZooKeeper
// expands into the session's authenticated ids: sasl:<user> for DIGEST-MD5, x509:<DN> for a TLS client
// certificate) gets every permission, and everyone else may read, except under the roots that hold secrets:
// SCRAM credentials and quotas of users (/config/users), broker configs that may carry passwords
// (/config/brokers) and delegation token details (/delegation_token/tokens), which only the creator may read.
// /consumers stays open, as in Kafka, because old consumers of any identity write below it.
//
// Paths are as the broker sees them, below the chroot of zookeeper.connect; the chroot itself is decided by its
// own path, as Kafka decides it when it creates the chroot over a session at the ensemble's root.

/** ZooKeeper's permission bits (ZooDefs.Perms). */
export const ZOOKEEPER_PERMS = {
  READ: 1,
  WRITE: 2,
  CREATE: 4,
  DELETE: 8,
  ADMIN: 16,
  ALL: 31,
} as const;

export interface ZooKeeperAcl {
  /** Bit set of ZOOKEEPER_PERMS. */
  readonly perms: number;
  /** world, auth, sasl, digest, x509, ip ... */
  readonly scheme: string;
  /** anyone for world; empty for auth (the creator); the user or DN otherwise. */
  readonly id: string;
}

/** Everything to everyone: ZooKeeper's OPEN_ACL_UNSAFE. */
export const OPEN_ACL: readonly ZooKeeperAcl[] = [
  { perms: ZOOKEEPER_PERMS.ALL, scheme: 'world', id: 'anyone' },
];
const CREATOR_ALL: ZooKeeperAcl = { perms: ZOOKEEPER_PERMS.ALL, scheme: 'auth', id: '' };
const WORLD_READ: ZooKeeperAcl = { perms: ZOOKEEPER_PERMS.READ, scheme: 'world', id: 'anyone' };

/** Old consumers of any identity create nodes below it, so Kafka leaves it open even with secure ACLs. */
const OPEN_PATH = '/consumers';

/**
 * Roots whose nodes only their creator may read (Kafka's ZkData.SensitiveRootPaths). Kafka matches them as string
 * prefixes, so a node whose name merely starts with one (/config/users2) counts as sensitive too; kept so.
 */
export const SENSITIVE_ROOT_PATHS: readonly string[] = [
  '/config/users',
  '/config/brokers',
  '/delegation_token/tokens',
];

export function isSensitivePath(path: string): boolean {
  return SENSITIVE_ROOT_PATHS.some((root) => path.startsWith(root));
}

/** The ACL list a node created at `path` gets; `secure` is zookeeper.set.acl. */
export function kafkaNodeAcls(secure: boolean, path: string): readonly ZooKeeperAcl[] {
  if (!secure || path === OPEN_PATH) return OPEN_ACL;
  return isSensitivePath(path) ? [CREATOR_ALL] : [CREATOR_ALL, WORLD_READ];
}
