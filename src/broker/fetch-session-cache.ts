// Incremental fetch sessions (KIP-227). A client that fetches many partitions opens a session with a full fetch;
// later fetches name only the partitions that changed, and responses carry only the partitions with news
// (records, an error, or a moved high watermark, last stable offset or log start offset).
//
// Ownership: the cache owns every session and its per-partition state. A request handler resolves its session
// with `resolve`, runs the fetch, then calls `shouldInclude` for each partition while building the response,
// all without awaiting in between, so two fetches of one session cannot interleave (clients never pipeline
// fetches of one session; if one did, the epoch check rejects the second).

import { assert } from '../common/assert.js';
import type { Offset } from '../common/ids.js';

/** The epoch a client sends to open a session; -1 (FINAL) closes it or asks for no session. */
export const INITIAL_EPOCH = 0;
export const FINAL_EPOCH = -1;
/** No session (sessionless full fetch). */
export const INVALID_SESSION_ID = 0;

export const FETCH_SESSION_ID_NOT_FOUND = 70;
export const INVALID_FETCH_SESSION_EPOCH = 71;
export const FETCH_SESSION_TOPIC_ID_ERROR = 106;

export interface SessionPartition {
  /** `topicId:partition` from v13, `topicName:partition` before. */
  readonly key: string;
  topicName: string;
  topicId: string;
  partition: number;
  fetchOffset: Offset;
  partitionMaxBytes: number;
  logStartOffset: number;
  currentLeaderEpoch: number;
  lastFetchedEpoch: number;
  /** What the last response said, to tell whether there is news to send. -1 before the first response. */
  sentHighWatermark: number;
  sentLastStableOffset: number;
  sentLogStartOffset: number;
}

export interface FetchSession {
  readonly id: number;
  /** The epoch the next incremental request must carry. */
  nextEpoch: number;
  readonly partitions: Map<string, SessionPartition>;
  lastUsedMs: number;
  readonly createdMs: number;
  /** A follower's session (Kafka's "privileged"): worth more than any consumer's when a slot is contended. */
  readonly privileged: boolean;
  /** Opened by Fetch v13+: its partitions are keyed by topic id, not by name. */
  readonly usesTopicIds: boolean;
}

export type ResolvedSession =
  | { kind: 'sessionless' }
  | { kind: 'full'; session: FetchSession }
  | { kind: 'incremental'; session: FetchSession }
  | { kind: 'error'; errorCode: number };

export interface SessionCacheOptions {
  /** max.incremental.fetch.session.cache.slots (Kafka's default 1000). */
  slots: number;
  /** min.incremental.fetch.session.eviction.ms: how long a session is safe from eviction (Kafka's 120000). */
  evictionMs: number;
  nowMs: () => number;
}

export class FetchSessionCache {
  private readonly sessions = new Map<number, FetchSession>();

  constructor(private readonly options: SessionCacheOptions) {
    assert(options.slots >= 0, 'slots must not be negative');
  }

  get size(): number {
    return this.sessions.size;
  }

  /**
   * Applies the session fields of a fetch request. `sessionPartitions` are the partitions the request names,
   * `forgotten` the keys it asks to drop (incremental only).
   *
   * As Kafka's FetchManager.newContext, the epoch decides what the request is: 0 or -1 is a full fetch, which
   * closes the session it names (known or not) and, at 0, opens a new one; the Java client sends its old session
   * id with epoch 0 after a failed request, a broker restart included, and gets a new session, not an error. Any
   * other epoch continues a session: FETCH_SESSION_ID_NOT_FOUND when there is none by that id (session id 0
   * included), INVALID_FETCH_SESSION_EPOCH when the epoch is not the one expected, FETCH_SESSION_TOPIC_ID_ERROR
   * when the request names topics otherwise (`usesTopicIds`: by id, Fetch v13+) than the session was opened with,
   * whose keys it could not match. A session that an incremental fetch leaves without partitions is closed, and
   * the request answered without a session.
   */
  resolve(
    sessionId: number,
    epoch: number,
    requested: readonly SessionPartition[],
    forgotten: readonly string[],
    privileged: boolean,
    usesTopicIds = false,
  ): ResolvedSession {
    const now = this.options.nowMs();
    if (epoch === INITIAL_EPOCH || epoch === FINAL_EPOCH) {
      if (sessionId !== INVALID_SESSION_ID) this.sessions.delete(sessionId);
      if (epoch === FINAL_EPOCH) return { kind: 'sessionless' };
      const session = this.create(requested, now, privileged, usesTopicIds);
      return session === undefined ? { kind: 'sessionless' } : { kind: 'full', session };
    }
    const session = this.sessions.get(sessionId);
    if (session === undefined) return { kind: 'error', errorCode: FETCH_SESSION_ID_NOT_FOUND };
    if (epoch !== session.nextEpoch) return { kind: 'error', errorCode: INVALID_FETCH_SESSION_EPOCH };
    if (usesTopicIds !== session.usesTopicIds)
      return { kind: 'error', errorCode: FETCH_SESSION_TOPIC_ID_ERROR };
    for (const key of forgotten) session.partitions.delete(key);
    for (const p of requested) {
      const known = session.partitions.get(p.key);
      if (known === undefined) {
        session.partitions.set(p.key, p);
      } else {
        known.fetchOffset = p.fetchOffset;
        known.partitionMaxBytes = p.partitionMaxBytes;
        known.logStartOffset = p.logStartOffset;
        known.currentLeaderEpoch = p.currentLeaderEpoch;
        known.lastFetchedEpoch = p.lastFetchedEpoch;
      }
    }
    if (session.partitions.size === 0) {
      this.sessions.delete(session.id);
      return { kind: 'sessionless' };
    }
    session.nextEpoch = nextEpoch(session.nextEpoch);
    session.lastUsedMs = now;
    // Map order is insertion order: re-inserting keeps the least recently used session first for eviction.
    this.sessions.delete(session.id);
    this.sessions.set(session.id, session);
    return { kind: 'incremental', session };
  }

  /**
   * Whether an incremental response must carry this partition, and records what it carries. Full responses
   * include every partition; call `remember` for those.
   */
  shouldInclude(
    p: SessionPartition,
    hasRecords: boolean,
    errorCode: number,
    highWatermark: number,
    lastStableOffset: number,
    logStartOffset: number,
  ): boolean {
    const news = hasNews(p, hasRecords, errorCode, highWatermark, lastStableOffset, logStartOffset);
    if (news) this.remember(p, highWatermark, lastStableOffset, logStartOffset);
    return news;
  }

  /**
   * Moves a partition that returned records in an incremental response to the back of its session (Kafka's
   * IncrementalFetchContext): the session's order is the order its next fetch reads in and shares max_bytes in,
   * and a client cannot reorder a session the way it reorders a full fetch. Without it, the partitions at the front
   * took every response's bytes for as long as they had a backlog, and the others got nothing.
   */
  moveToBack(session: FetchSession, p: SessionPartition): void {
    if (session.partitions.get(p.key) !== p) return;
    session.partitions.delete(p.key);
    session.partitions.set(p.key, p);
  }

  remember(
    p: SessionPartition,
    highWatermark: number,
    lastStableOffset: number,
    logStartOffset: number,
  ): void {
    p.sentHighWatermark = highWatermark;
    p.sentLastStableOffset = lastStableOffset;
    p.sentLogStartOffset = logStartOffset;
  }

  remove(sessionId: number): void {
    this.sessions.delete(sessionId);
  }

  private create(
    requested: readonly SessionPartition[],
    now: number,
    privileged: boolean,
    usesTopicIds: boolean,
  ): FetchSession | undefined {
    if (this.options.slots === 0) return undefined;
    const partitions = new Map(requested.map((p) => [p.key, p]));
    if (this.sessions.size >= this.options.slots && !this.evictOne(now, privileged, partitions.size))
      return undefined;
    const id = this.newId();
    const session: FetchSession = {
      id,
      nextEpoch: 1,
      partitions,
      lastUsedMs: now,
      createdMs: now,
      privileged,
      usesTopicIds,
    };
    this.sessions.set(id, session);
    return session;
  }

  /**
   * Frees a slot for a new session of `size` partitions, as Kafka's FetchSessionCacheShard.tryEvict: the least
   * recently used session if it has been idle longer than the eviction time; otherwise the least valuable session
   * that may be evicted, when the new one is worth more. Worth orders by privilege (a follower's session over a
   * consumer's), then by size (more partitions save more on every incremental fetch). A follower may evict any
   * consumer's session; any other eviction needs a session that was older than the eviction time when last used,
   * so that a new session is safe for that long and consumers that outnumber the slots do not evict each other in
   * turn, while a large session still gets a slot held by a small one. A consumer never evicts a follower's
   * session that is in use.
   */
  private evictOne(now: number, privileged: boolean, size: number): boolean {
    // Map order is least recently used first (resolve re-inserts a session it continues).
    const leastRecent = this.sessions.values().next();
    if (leastRecent.done === true) return false;
    if (now - leastRecent.value.lastUsedMs > this.options.evictionMs) {
      this.sessions.delete(leastRecent.value.id);
      return true;
    }
    let victim: FetchSession | undefined;
    for (const session of this.sessions.values()) {
      if (!this.evictableBy(session, privileged)) continue;
      if (victim === undefined || worthLess(session, victim)) victim = session;
    }
    if (victim === undefined) return false;
    // Kafka compares the new session as (privileged, size, id 0): an equal one is not worth more.
    const worthMore = privileged !== victim.privileged ? privileged : size > victim.partitions.size;
    if (!worthMore) return false;
    this.sessions.delete(victim.id);
    return true;
  }

  /**
   * Kafka files a session as evictable when it is used (FetchSessionCache.touch): by anyone once it was older
   * than the eviction time then, and by a follower also when it is a consumer's.
   */
  private evictableBy(session: FetchSession, privileged: boolean): boolean {
    const settled = session.lastUsedMs - session.createdMs > this.options.evictionMs;
    return settled || (privileged && !session.privileged);
  }

  private newId(): number {
    for (;;) {
      const id = 1 + Math.floor(Math.random() * 0x7ffffffe);
      if (!this.sessions.has(id)) return id;
    }
  }
}

/** Kafka's EvictableKey order: consumer before follower, fewer partitions first, then the lower id. */
function worthLess(a: FetchSession, b: FetchSession): boolean {
  if (a.privileged !== b.privileged) return !a.privileged;
  if (a.partitions.size !== b.partitions.size) return a.partitions.size < b.partitions.size;
  return a.id < b.id;
}

function nextEpoch(epoch: number): number {
  // Epochs wrap from int32 max back to 1; 0 and -1 have their own meanings.
  return epoch === 0x7fffffff ? 1 : epoch + 1;
}

/** Whether an incremental response must carry this partition (shouldInclude without recording it). */
export function hasNews(
  p: SessionPartition,
  hasRecords: boolean,
  errorCode: number,
  highWatermark: number,
  lastStableOffset: number,
  logStartOffset: number,
): boolean {
  return (
    hasRecords ||
    errorCode !== 0 ||
    p.sentHighWatermark !== highWatermark ||
    p.sentLastStableOffset !== lastStableOffset ||
    p.sentLogStartOffset !== logStartOffset
  );
}
