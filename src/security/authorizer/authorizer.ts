// The ACL authorizer (Kafka's kafka.security.authorizer.AclAuthorizer, ZooKeeper mode): ACLs in the metadata
// store (acl-store.ts), a copy in memory for the per-request check (acl-cache.ts), kept current by the change
// notifications every broker watches, and CreateAcls / DescribeAcls / DeleteAcls.
//
// Lifecycle: start() creates the top-level nodes, reads the notifications (setting the watch) and then every
// ACL; a change that lands meanwhile is read again when its notification fires, so none is missed. start() is
// called again after a ZooKeeper session was renewed (watches die with the session). stop() stops following.

import type { Logger } from '../../common/logger.js';
import type { CoordinationStore } from '../../controller/store/store.js';
import { AclCache } from './acl-cache.js';
import { bindingMatches } from './acl-filter.js';
import { AclStore, CHANGE_EXPIRATION_MS, sequenceOf } from './acl-store.js';
import {
  type AclBinding,
  type AclBindingFilter,
  type AclEntry,
  patternKey,
  type ResourcePattern,
  sameEntry,
} from './acl-types.js';
import { EXTENDED_CHANGES_PATH, LITERAL_CHANGES_PATH } from './acl-znodes.js';
import type { AuditLog } from './audit-log.js';

/** The class name that turns authorization on (authorizer.class.name), as Kafka's ZooKeeper-mode brokers use. */
export const ACL_AUTHORIZER_CLASS = 'kafka.security.authorizer.AclAuthorizer';

export interface AuthorizerSettings {
  /** super.users, already split on ';' and trimmed. */
  readonly superUsers: readonly string[];
  /** allow.everyone.if.no.acl.found. */
  readonly allowEveryoneIfNoAclFound: boolean;
}

/** Parses super.users: principals separated by ';' (Kafka's separator, since principals may hold commas). */
export function parseSuperUsers(value: string): string[] {
  return value
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/**
 * Resources written at once: their writes touch different nodes, so they do not conflict, and the store's
 * group commit lets them share disk flushes (one request creating thousands of ACLs is seconds, not minutes).
 */
const CONCURRENT_WRITES_MAX = 64;

async function inGroups<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += CONCURRENT_WRITES_MAX) {
    await Promise.all(items.slice(i, i + CONCURRENT_WRITES_MAX).map(work));
  }
}

export interface DeleteResult {
  readonly error: string | null;
  readonly deleted: AclBinding[];
}

export class AclAuthorizer {
  private readonly cache = new AclCache();
  private readonly superUsers: ReadonlySet<string>;
  private readonly acls: AclStore;
  private readonly lastSeen = new Map<string, number>();
  private stopped = false;
  /** Notification processing runs one at a time, so two reads of one resource cannot land out of order. */
  private changes: Promise<void> = Promise.resolve();

  constructor(
    store: CoordinationStore,
    private readonly settings: AuthorizerSettings,
    private readonly logger: Logger,
    readonly audit: AuditLog,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.superUsers = new Set(settings.superUsers);
    this.acls = new AclStore(store);
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.acls.ensurePaths();
    // Queued with the notifications, so that a change notified while every ACL is read is applied after the
    // read, never undone by it.
    const loaded = this.changes.then(() => this.loadAll());
    this.changes = loaded.catch((err: unknown) => this.logger.error(`loading ACLs: ${String(err)}`));
    await loaded;
    this.logger.info(`authorizer loaded ACLs of ${this.cache.patternCount} resource patterns`);
  }

  /**
   * Follows the notifications from now on and reads every ACL. The copy in memory is replaced, not added to:
   * after a ZooKeeper session expired (start() again) the notifications written meanwhile are skipped as history,
   * so a resource whose last ACL was deleted meanwhile is known only by its absence here. Kafka's brokers replay
   * those notifications instead; either way a revoked grant does not outlive the session. A failed read throws
   * and leaves the previous copy whole.
   */
  private async loadAll(): Promise<void> {
    this.lastSeen.clear();
    for (const path of [LITERAL_CHANGES_PATH, EXTENDED_CHANGES_PATH]) await this.processChanges(path);
    this.cache.replaceAll(await this.acls.readAll());
  }

  stop(): void {
    this.stopped = true;
  }

  isSuperUser(principal: string): boolean {
    return this.superUsers.has(principal);
  }

  /** The check: no I/O, no allocation on the common path. */
  authorize(principal: string, host: string, operation: number, resourceType: number, name: string): boolean {
    if (this.superUsers.size !== 0 && this.superUsers.has(principal)) return true;
    return this.cache.authorize(
      principal,
      host,
      operation,
      resourceType,
      name,
      this.settings.allowEveryoneIfNoAclFound,
    );
  }

  /** Whether the principal may perform `operation` on some resource of the type (Kafka's authorizeByResourceType). */
  authorizeAny(principal: string, host: string, operation: number, resourceType: number): boolean {
    if (this.superUsers.has(principal)) return true;
    return this.cache.authorizeAny(
      principal,
      host,
      operation,
      resourceType,
      this.settings.allowEveryoneIfNoAclFound,
    );
  }

  describe(filter: AclBindingFilter): AclBinding[] {
    const out: AclBinding[] = [];
    for (const binding of this.cache.bindings()) if (bindingMatches(filter, binding)) out.push(binding);
    return out;
  }

  /** Stores valid bindings (validated by the caller); one error text per binding, null when created. */
  async create(bindings: readonly AclBinding[]): Promise<(string | null)[]> {
    const results: (string | null)[] = bindings.map(() => null);
    const byPattern = new Map<string, { pattern: ResourcePattern; indexes: number[] }>();
    bindings.forEach((b, i) => {
      const key = patternKey(b.pattern);
      const group = byPattern.get(key) ?? { pattern: b.pattern, indexes: [] };
      group.indexes.push(i);
      byPattern.set(key, group);
    });
    await inGroups([...byPattern.values()], async ({ pattern, indexes }) => {
      try {
        const stored = await this.acls.update(pattern, (current) => {
          const next = [...current];
          for (const i of indexes) {
            const entry = bindings[i]!.entry;
            if (!next.some((e) => sameEntry(e, entry))) next.push(entry);
          }
          return next.length === current.length ? null : next;
        });
        this.cache.set(pattern, stored);
      } catch (err) {
        const message = `Failed to create ACLs: ${err instanceof Error ? err.message : String(err)}`;
        for (const i of indexes) results[i] = message;
      }
    });
    return results;
  }

  /** Deletes what each filter matches (filters validated by the caller). */
  async delete(filters: readonly AclBindingFilter[]): Promise<DeleteResult[]> {
    const results: DeleteResult[] = [];
    for (const filter of filters) {
      const matched = this.describe(filter);
      const byPattern = new Map<string, { pattern: ResourcePattern; entries: AclEntry[] }>();
      for (const b of matched) {
        const key = patternKey(b.pattern);
        const group = byPattern.get(key) ?? { pattern: b.pattern, entries: [] };
        group.entries.push(b.entry);
        byPattern.set(key, group);
      }
      const deleted: AclBinding[] = [];
      let error: string | null = null;
      await inGroups([...byPattern.values()], async ({ pattern, entries }) => {
        try {
          const stored = await this.acls.update(pattern, (current) => {
            const next = current.filter((e) => !entries.some((d) => sameEntry(d, e)));
            return next.length === current.length ? null : next;
          });
          this.cache.set(pattern, stored);
          for (const entry of entries) deleted.push({ pattern, entry });
        } catch (err) {
          error = `Failed to delete ACLs: ${err instanceof Error ? err.message : String(err)}`;
        }
      });
      results.push({ error, deleted });
    }
    return results;
  }

  private async processChanges(changesPath: string): Promise<void> {
    if (this.stopped) return;
    const names = await this.acls.changeNames(changesPath, () => {
      this.changes = this.changes
        .then(() => this.processChanges(changesPath))
        .catch((err: unknown) => this.logger.error(`ACL change notifications: ${String(err)}`));
    });
    if (names === null) return;
    const seen = this.lastSeen.get(changesPath);
    const fresh = names
      .map((name) => ({ name, seq: sequenceOf(name) }))
      .filter((c) => c.seq >= 0 && (seen === undefined || c.seq > seen))
      .sort((a, b) => a.seq - b.seq);
    // On start the current ACLs are read next: older notifications are history.
    if (seen === undefined) {
      this.lastSeen.set(changesPath, fresh.length === 0 ? -1 : fresh[fresh.length - 1]!.seq);
      return;
    }
    for (const change of fresh) {
      this.lastSeen.set(changesPath, change.seq);
      const read = await this.acls.readChange(changesPath, change.name, this.nowMs());
      if (read === null) continue;
      if (read.pattern === null) {
        this.logger.warn(`ignoring unreadable ACL change notification ${changesPath}/${change.name}`);
      } else {
        const stored = await this.acls.read(read.pattern);
        this.cache.set(read.pattern, stored.entries);
      }
      // As Kafka, notifications are kept for a while (a broker restarting reads the ACLs themselves) and then
      // deleted by whichever broker sees them old.
      if (read.ageMs > CHANGE_EXPIRATION_MS) await this.acls.deleteChange(changesPath, change.name);
    }
  }
}
