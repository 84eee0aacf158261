// The broker's in-memory copy of every ACL, indexed for the check that runs on every request: by resource type,
// then by literal name in a Map, and by prefix in a Map keyed by the prefix itself. A prefixed lookup asks only
// the prefix lengths that exist for that resource type (a handful in practice), never scans the ACLs.
//
// Decision rules, as Kafka's AclAuthorizer: a super user may do anything; a matching DENY (operation or ALL)
// wins over any ALLOW; an ALLOW matches its operation, ALL, and the implications READ/WRITE/DELETE/ALTER =>
// DESCRIBE and ALTER_CONFIGS => DESCRIBE_CONFIGS; a resource with no ACL at all is allowed only with
// allow.everyone.if.no.acl.found. Principals match exactly or through User:*, hosts exactly or through *.
//
// Ownership: the authorizer replaces a pattern's entries in one synchronous step (`set`), so a check never sees
// half a change.

import {
  type AclBinding,
  type AclEntry,
  AclOperation,
  PatternType,
  PermissionType,
  type ResourcePattern,
  WILDCARD_HOST,
  WILDCARD_PRINCIPAL,
  WILDCARD_RESOURCE,
} from './acl-types.js';

const EMPTY: readonly AclEntry[] = [];

class TypeIndex {
  readonly literal = new Map<string, readonly AclEntry[]>();
  readonly prefixed = new Map<string, readonly AclEntry[]>();
  /** How many prefixes of each length there are; `prefixLengths` is its key set, ascending. */
  private readonly lengthCounts = new Map<number, number>();
  prefixLengths: readonly number[] = [];

  setPrefixed(name: string, entries: readonly AclEntry[]): void {
    const had = this.prefixed.has(name);
    if (entries.length === 0) {
      if (!had) return;
      this.prefixed.delete(name);
      this.countLength(name.length, -1);
    } else {
      this.prefixed.set(name, entries);
      if (!had) this.countLength(name.length, 1);
    }
  }

  private countLength(length: number, delta: number): void {
    const count = (this.lengthCounts.get(length) ?? 0) + delta;
    if (count === 0) this.lengthCounts.delete(length);
    else this.lengthCounts.set(length, count);
    this.prefixLengths = [...this.lengthCounts.keys()].sort((a, b) => a - b);
  }

  get size(): number {
    return this.literal.size + this.prefixed.size;
  }
}

/** The entry lists that apply to one resource, gathered without allocating (a check runs to completion). */
const scratch: (readonly AclEntry[])[] = [];

function allowImplies(requested: number, granted: number): boolean {
  if (granted === requested || granted === AclOperation.ALL) return true;
  if (requested === AclOperation.DESCRIBE) {
    return (
      granted === AclOperation.READ ||
      granted === AclOperation.WRITE ||
      granted === AclOperation.DELETE ||
      granted === AclOperation.ALTER
    );
  }
  return requested === AclOperation.DESCRIBE_CONFIGS && granted === AclOperation.ALTER_CONFIGS;
}

function entryApplies(entry: AclEntry, principal: string, host: string): boolean {
  return (
    (entry.principal === principal || entry.principal === WILDCARD_PRINCIPAL) &&
    (entry.host === host || entry.host === WILDCARD_HOST)
  );
}

export class AclCache {
  private readonly types: (TypeIndex | undefined)[] = [];

  private index(resourceType: number): TypeIndex {
    let idx = this.types[resourceType];
    if (idx === undefined) {
      idx = new TypeIndex();
      this.types[resourceType] = idx;
    }
    return idx;
  }

  /** Replaces a pattern's entries; an empty list removes the pattern. */
  set(pattern: ResourcePattern, entries: readonly AclEntry[]): void {
    const idx = this.index(pattern.resourceType);
    if (pattern.patternType === PatternType.PREFIXED) idx.setPrefixed(pattern.name, entries);
    else if (entries.length === 0) idx.literal.delete(pattern.name);
    else idx.literal.set(pattern.name, entries);
  }

  /**
   * Replaces every pattern's entries with `all`, in one synchronous step: a pattern absent from `all` (its node
   * deleted in the store) is gone afterwards.
   */
  replaceAll(all: readonly { pattern: ResourcePattern; entries: readonly AclEntry[] }[]): void {
    this.types.length = 0;
    for (const { pattern, entries } of all) this.set(pattern, entries);
  }

  get(pattern: ResourcePattern): readonly AclEntry[] {
    const idx = this.types[pattern.resourceType];
    if (idx === undefined) return EMPTY;
    const map = pattern.patternType === PatternType.PREFIXED ? idx.prefixed : idx.literal;
    return map.get(pattern.name) ?? EMPTY;
  }

  /** Number of resource patterns holding ACLs. */
  get patternCount(): number {
    let n = 0;
    for (const idx of this.types) if (idx !== undefined) n += idx.size;
    return n;
  }

  *bindings(): IterableIterator<AclBinding> {
    for (let resourceType = 0; resourceType < this.types.length; resourceType++) {
      const idx = this.types[resourceType];
      if (idx === undefined) continue;
      for (const [name, entries] of idx.literal) {
        const pattern = { resourceType, name, patternType: PatternType.LITERAL };
        for (const entry of entries) yield { pattern, entry };
      }
      for (const [name, entries] of idx.prefixed) {
        const pattern = { resourceType, name, patternType: PatternType.PREFIXED };
        for (const entry of entries) yield { pattern, entry };
      }
    }
  }

  /**
   * Whether `principal` from `host` may perform `operation` on the resource (type, name), super users aside.
   * `allowIfNoAcl` is allow.everyone.if.no.acl.found.
   */
  authorize(
    principal: string,
    host: string,
    operation: number,
    resourceType: number,
    name: string,
    allowIfNoAcl: boolean,
  ): boolean {
    const idx = this.types[resourceType];
    if (idx === undefined || idx.size === 0) return allowIfNoAcl;
    scratch.length = 0;
    const exact = idx.literal.get(name);
    if (exact !== undefined) scratch.push(exact);
    if (name !== WILDCARD_RESOURCE) {
      const wildcard = idx.literal.get(WILDCARD_RESOURCE);
      if (wildcard !== undefined) scratch.push(wildcard);
    }
    const lengths = idx.prefixLengths;
    for (let i = 0; i < lengths.length && lengths[i]! <= name.length; i++) {
      const entries = idx.prefixed.get(name.slice(0, lengths[i]));
      if (entries !== undefined) scratch.push(entries);
    }
    if (scratch.length === 0) return allowIfNoAcl;
    let allowed = false;
    for (const entries of scratch) {
      for (const entry of entries) {
        if (!entryApplies(entry, principal, host)) continue;
        if (entry.permissionType === PermissionType.DENY) {
          if (entry.operation === operation || entry.operation === AclOperation.ALL) {
            scratch.length = 0;
            return false;
          }
        } else if (
          entry.permissionType === PermissionType.ALLOW &&
          allowImplies(operation, entry.operation)
        ) {
          allowed = true;
        }
      }
    }
    scratch.length = 0;
    return allowed;
  }

  /**
   * Kafka's AclAuthorizer.authorizeByResourceType, used for idempotent producers (WRITE on any topic): first
   * the check of a made-up resource name ("hardcode", as Kafka), which lets allow.everyone.if.no.acl.found and
   * wildcard ALLOWs through; then, over the ACLs of the principal (or User:*) from the host (or *) for the
   * operation (or ALL): a DENY of the literal `*` refuses; an ALLOW of the literal `*` grants; an ALLOWed prefix
   * grants unless a DENYed prefix starts it; an ALLOWed literal grants unless it is DENYed literally or a DENYed
   * prefix starts it. Scans the type's ACLs: used by rare requests (InitProducerId), not per record.
   */
  authorizeAny(
    principal: string,
    host: string,
    operation: number,
    resourceType: number,
    allowIfNoAcl: boolean,
  ): boolean {
    if (this.authorize(principal, host, operation, resourceType, 'hardcode', allowIfNoAcl)) return true;
    const idx = this.types[resourceType];
    if (idx === undefined) return false;
    const matching = (e: AclEntry, permission: number) =>
      e.permissionType === permission &&
      (e.operation === operation || e.operation === AclOperation.ALL) &&
      entryApplies(e, principal, host);
    const names = (map: ReadonlyMap<string, readonly AclEntry[]>, permission: number): string[] => {
      const out: string[] = [];
      for (const [name, entries] of map) if (entries.some((e) => matching(e, permission))) out.push(name);
      return out;
    };
    const denyLiterals = new Set(names(idx.literal, PermissionType.DENY));
    if (denyLiterals.has(WILDCARD_RESOURCE)) return false;
    const allowLiterals = names(idx.literal, PermissionType.ALLOW);
    if (allowLiterals.includes(WILDCARD_RESOURCE)) return true;
    const denyPrefixes = names(idx.prefixed, PermissionType.DENY);
    const dominated = (name: string) => denyPrefixes.some((p) => name.startsWith(p));
    for (const prefix of names(idx.prefixed, PermissionType.ALLOW)) if (!dominated(prefix)) return true;
    for (const literal of allowLiterals) if (!denyLiterals.has(literal) && !dominated(literal)) return true;
    return false;
  }
}
