// Reading and writing ACL znodes (layout in acl-znodes.ts) and following the change notifications. A resource's
// node is replaced with a conditional set on its version (or created, or deleted when its last ACL goes), in one
// multi with the notification, so a notification never names a change that was not made.

import type { CoordinationStore, Op } from '../../controller/store/store.js';
import { type AclEntry, PatternType, parseResourceType, type ResourcePattern } from './acl-types.js';
import {
  aclNodePath,
  aclTypePath,
  CHANGE_PREFIX,
  changesPathFor,
  decodeAcls,
  decodeChange,
  EXTENDED_ACL_PATH,
  EXTENDED_CHANGES_PATH,
  encodeAcls,
  encodeChange,
  LITERAL_ACL_PATH,
  LITERAL_CHANGES_PATH,
  PREFIXED_ACL_PATH,
} from './acl-znodes.js';

/** Attempts of one read-modify-write against concurrent writers before giving up. */
const UPDATE_ATTEMPTS_MAX = 10;
/** Kafka deletes ACL change notifications older than this (AclAuthorizer's changeExpirationMs). */
export const CHANGE_EXPIRATION_MS = 15 * 60 * 1000;

export class AclStoreError extends Error {}

export interface StoredAcls {
  readonly entries: AclEntry[];
  /** The node's data version, or -1 when there is no node. */
  readonly version: number;
}

export class AclStore {
  constructor(private readonly store: CoordinationStore) {}

  /** Creates the top-level nodes Kafka creates at startup (needed before their children can be watched). */
  async ensurePaths(): Promise<void> {
    for (const path of [
      LITERAL_ACL_PATH,
      EXTENDED_ACL_PATH,
      PREFIXED_ACL_PATH,
      LITERAL_CHANGES_PATH,
      EXTENDED_CHANGES_PATH,
    ]) {
      await this.ensure(path);
    }
  }

  private async ensure(path: string): Promise<void> {
    const created = await this.store.create(path, new Uint8Array(0));
    if (!created.ok && created.code !== 'NODEEXISTS') {
      throw new AclStoreError(`creating ${path}: ${created.code}`);
    }
  }

  async read(pattern: ResourcePattern): Promise<StoredAcls> {
    const node = await this.store.get(aclNodePath(pattern));
    if (!node.ok) {
      if (node.code === 'NONODE') return { entries: [], version: -1 };
      throw new AclStoreError(`reading ${aclNodePath(pattern)}: ${node.code}`);
    }
    return { entries: decodeAcls(node.value.data).entries, version: node.value.stat.version };
  }

  /** Every stored resource pattern with its entries. */
  async readAll(): Promise<{ pattern: ResourcePattern; entries: AclEntry[] }[]> {
    const out: { pattern: ResourcePattern; entries: AclEntry[] }[] = [];
    for (const [root, patternType] of [
      [LITERAL_ACL_PATH, PatternType.LITERAL],
      [PREFIXED_ACL_PATH, PatternType.PREFIXED],
    ] as const) {
      // A missing node has no ACLs; any other failure throws: the answer replaces the broker's whole copy, and
      // a part left out would drop its DENYs as well as its ALLOWs.
      const types = await this.childrenOrNone(root);
      for (const typeName of types) {
        const resourceType = parseResourceType(typeName);
        if (resourceType === null) continue;
        const names = await this.childrenOrNone(`${root}/${typeName}`);
        // Reads go out together: ten thousand resources are ten thousand round trips to ZooKeeper otherwise.
        const patterns = names.map((name) => ({ resourceType, name, patternType }));
        const read = await Promise.all(patterns.map((p) => this.read(p)));
        for (let i = 0; i < patterns.length; i++) {
          if (read[i]!.entries.length > 0) out.push({ pattern: patterns[i]!, entries: read[i]!.entries });
        }
      }
    }
    return out;
  }

  private async childrenOrNone(path: string): Promise<string[]> {
    const children = await this.store.children(path);
    if (children.ok) return children.value;
    if (children.code === 'NONODE') return [];
    throw new AclStoreError(`listing ${path}: ${children.code}`);
  }

  /**
   * Applies `change` to a resource's entries and writes the result with its notification; answers the entries
   * now stored. `change` may be called again when another writer got there first.
   */
  async update(
    pattern: ResourcePattern,
    change: (current: readonly AclEntry[]) => AclEntry[] | null,
  ): Promise<readonly AclEntry[]> {
    await this.ensure(aclTypePath(pattern.patternType, pattern.resourceType));
    const path = aclNodePath(pattern);
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS_MAX; attempt++) {
      const current = await this.read(pattern);
      const next = change(current.entries);
      if (next === null) return current.entries;
      let write: Op;
      if (next.length === 0) {
        if (current.version < 0) return next;
        write = { op: 'delete', path, version: current.version };
      } else if (current.version < 0) {
        write = { op: 'create', path, data: encodeAcls(next), mode: 'persistent' };
      } else {
        write = { op: 'set', path, data: encodeAcls(next), version: current.version };
      }
      const result = await this.store.multi([
        write,
        {
          op: 'create',
          path: `${changesPathFor(pattern)}/${CHANGE_PREFIX}`,
          data: encodeChange(pattern),
          mode: 'persistent_sequential',
        },
      ]);
      if (result.ok) return next;
      if (result.code !== 'BADVERSION' && result.code !== 'NODEEXISTS' && result.code !== 'NONODE') {
        throw new AclStoreError(`writing ${path}: ${result.code}`);
      }
    }
    throw new AclStoreError(`writing ${path}: too many concurrent updates`);
  }

  /** Notification names under a changes path, with the watch set; null when the store refused. */
  async changeNames(changesPath: string, onChange: () => void): Promise<string[] | null> {
    const children = await this.store.children(changesPath, onChange);
    return children.ok ? children.value.filter((n) => n.startsWith(CHANGE_PREFIX)) : null;
  }

  /** The resource a notification names and its age; null when it is gone or unreadable. */
  async readChange(
    changesPath: string,
    name: string,
    nowMs: number,
  ): Promise<{ pattern: ResourcePattern | null; ageMs: number } | null> {
    const node = await this.store.get(`${changesPath}/${name}`);
    if (!node.ok) return null;
    return { pattern: decodeChange(changesPath, node.value.data), ageMs: nowMs - node.value.stat.ctimeMs };
  }

  async deleteChange(changesPath: string, name: string): Promise<void> {
    await this.store.delete(`${changesPath}/${name}`, -1);
  }
}

export function sequenceOf(name: string): number {
  const seq = Number(name.slice(CHANGE_PREFIX.length));
  return Number.isSafeInteger(seq) ? seq : -1;
}
