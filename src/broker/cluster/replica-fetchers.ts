// Replica fetchers: for each leader that this broker follows partitions of, num.replica.fetchers loops that fetch
// from it with this broker's replica id and append what comes back; a partition is fetched by the loop Kafka's
// getFetcherId names (fetcher-id.ts), and a dynamic change of the count (resize) moves partitions between loops
// with their fetch state (Kafka's AbstractFetcherManager.resizeThreadPool). The leader learns each follower's log end offset from
// the fetch offsets (and moves its high watermark); the follower learns the high watermark from the responses.
//
// After a leader change a follower first asks the new leader for the end offset of its own latest leader epoch
// (OffsetForLeaderEpoch) and truncates to it, never to its high watermark alone: that is what keeps the
// records KIP-101 describes from being lost. An OFFSET_OUT_OF_RANGE answer makes it ask the leader's log end
// and start offsets, as Kafka's fetchOffsetAndTruncate does (see resolveOutOfRange).
//
// The leader is reached through a LeaderEndPoint (over the wire in a broker, in process in the data-plane
// simulation), and every wait (backoffs) is a timer of the injected clock.
//
// Ownership: the manager owns the fetchers; each fetcher owns its partition set and its end point (one connection
// per fetcher, as each Kafka fetcher thread has its own). A fetch
// response is applied in one synchronous step per partition, and only to the fetch state (leader epoch, fetch
// offset) it was asked for: an answer that arrives after a LeaderAndIsr or a truncation is dropped.
//
// Lifecycle: refresh() after every LeaderAndIsr and StopReplica. Once the broker's shutdown has begun
// (beginShutdown(), as Kafka's ReplicaManager skips adding fetchers while shutting down) a refresh only stops
// fetching, never starts: a LeaderAndIsr that arrives then (from a controller elected while this broker stops)
// must not start a loop that keeps the process alive after stop(). stop() ends every fetcher for good.

import assert from 'node:assert/strict';
import { type Clock, sleep, systemClock } from '../../common/clock.js';
import type { FramePool } from '../../common/frame-pool.js';
import type { BrokerId, LeaderEpoch, Offset } from '../../common/ids.js';
import type { Logger } from '../../common/logger.js';
import { ErrorCode } from '../../protocol/errors.js';
import { ZERO_UUID } from '../../protocol/messages/codec-support.js';
import type { InterBrokerSecurity } from '../../security/inter-broker.js';
import type { Log } from '../../storage/log.js';
import type { MetadataCache } from '../metadata/metadata-cache.js';
import type { ReplicationQuota } from '../quota/replication-quota.js';
import type { Partition } from '../replica/partition.js';
import type { ReplicaManager } from '../replica/replica-manager.js';
import { fetcherIdOf } from './fetcher-id.js';
import { type LeaderEndPoint, RemoteLeaderEndPoint } from './leader-end-point.js';

export interface FetcherSettings {
  readonly brokerId: BrokerId;
  /** num.replica.fetchers at start (1 unless told); resize() changes it at runtime. */
  readonly numFetchers?: number;
  readonly listenerName: string;
  /** replica.fetch.max.bytes */
  readonly fetchMaxBytes: number;
  /** replica.fetch.response.max.bytes */
  readonly responseMaxBytes: number;
  /** replica.fetch.wait.max.ms */
  readonly waitMaxMs: number;
  /** replica.fetch.min.bytes */
  readonly minBytes: number;
  /** replica.fetch.backoff.ms */
  readonly backoffMs: number;
  /** replica.socket.timeout.ms */
  readonly socketTimeoutMs: number;
  /** TLS and SASL of the inter-broker listener. */
  readonly security?: InterBrokerSecurity;
  /** follower.replication.throttled.rate over the topics' follower.replication.throttled.replicas. */
  readonly quota?: ReplicationQuota;
  /**
   * This broker's epoch (its registration's), sent in each fetch (Fetch v15's replica epoch) so that the leader
   * puts it in the ISR changes it asks for (KIP-903); -1 or absent when not registered.
   */
  readonly brokerEpoch?: () => number;
}

/** Opens an end point to a leader, or null when its address is not known yet (the fetcher backs off). */
export type LeaderEndPoints = (leaderId: number) => LeaderEndPoint | null;

/** What a fetcher runs on besides the settings: in a broker, the wire and the system clock. */
export interface FetcherEnvironment {
  readonly endPoints?: LeaderEndPoints;
  readonly clock?: Clock;
  /** The broker's pool, where fetch answers over the wire are read into (see RemoteLeaderEndPoint). */
  readonly framePool?: FramePool;
}

interface Followed {
  readonly partition: Partition;
  /** The leader epoch this broker followed it at; a new one means truncating first. */
  epoch: number;
  needsTruncation: boolean;
  /**
   * The leader answered OFFSET_OUT_OF_RANGE: before fetching again the fetcher asks for the leader's log end and
   * start offsets (Kafka's fetchOffsetAndTruncate).
   */
  outOfRange: boolean;
  /** The leader's high watermark in its last answer, absent before one (FetcherLagMetrics). */
  leaderHighWatermark?: Offset;
}

class LeaderFetcher {
  readonly partitions = new Map<string, Followed>();
  private endPoint: LeaderEndPoint | null = null;
  private running = false;
  private stopped = false;

  constructor(
    readonly leaderId: number,
    readonly fetcherId: number,
    private readonly settings: FetcherSettings,
    private readonly endPoints: LeaderEndPoints,
    private readonly clock: Clock,
    private readonly onHighWatermark: (p: Partition) => void,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.running || this.stopped) return;
    this.running = true;
    this.loop()
      .catch((err: unknown) =>
        this.logger.error(`fetcher ${this.fetcherId} for broker ${this.leaderId} failed: ${String(err)}`),
      )
      .finally(() => {
        this.running = false;
      });
  }

  stop(): void {
    this.stopped = true;
    this.endPoint?.close();
  }

  private async loop(): Promise<void> {
    let storageFailures = 0;
    while (!this.stopped && this.partitions.size > 0) {
      const endPoint = this.connect();
      if (endPoint === null) {
        await sleep(this.clock, this.settings.backoffMs);
        continue;
      }
      try {
        await this.truncateWhereNeeded(endPoint);
        await this.resolveOutOfRange(endPoint);
        await this.fetchOnce(endPoint);
        storageFailures = 0;
      } catch (err) {
        if (this.stopped) return;
        const message = err instanceof Error ? err.message : String(err);
        // A local disk that refuses writes (full, read-only, failing) does not get better in a second: back off
        // (issue 13, N1: a full disk was retried every second). The connection was fine; keep it.
        if (isStorageError(err)) {
          storageFailures++;
          const waitMs = storageBackoffMs(this.settings.backoffMs, storageFailures);
          this.logger.warn(
            `fetch from broker ${this.leaderId} failed writing locally: ${message}; next attempt in ${waitMs} ms`,
          );
          await sleep(this.clock, waitMs);
          continue;
        }
        this.logger.warn(`fetch from broker ${this.leaderId} failed: ${message}`);
        this.endPoint?.close();
        this.endPoint = null;
        await sleep(this.clock, this.settings.backoffMs);
      }
    }
  }

  private connect(): LeaderEndPoint | null {
    if (this.endPoint === null) this.endPoint = this.endPoints(this.leaderId);
    return this.endPoint;
  }

  private async truncateWhereNeeded(endPoint: LeaderEndPoint): Promise<void> {
    const pending = [...this.partitions.values()].filter((f) => f.needsTruncation);
    if (pending.length === 0) return;
    const byTopic = new Map<string, Followed[]>();
    for (const f of pending) {
      const list = byTopic.get(f.partition.topic) ?? [];
      list.push(f);
      byTopic.set(f.partition.topic, list);
    }
    const response = await endPoint.fetchEpochEndOffsets(
      {
        replicaId: this.settings.brokerId,
        topics: [...byTopic].map(([topic, list]) => ({
          topic,
          partitions: list.map((f) => ({
            partition: f.partition.partition,
            currentLeaderEpoch: f.epoch,
            leaderEpoch: f.partition.log.epochCache.latestEpoch,
          })),
        })),
      },
      this.settings.socketTimeoutMs,
    );
    for (const t of response.topics) {
      for (const p of t.partitions) {
        const followed = this.partitions.get(`${t.topic}-${p.partition}`);
        // Only for the state the request was made for: a LeaderAndIsr meanwhile replaced it.
        if (followed === undefined || !pending.includes(followed) || p.errorCode !== ErrorCode.NONE) continue;
        const log = followed.partition.log;
        // No epoch known on either side: fall back to the high watermark, as Kafka does.
        const target = p.endOffset >= 0n ? Number(p.endOffset) : log.highWatermark;
        if (target < log.logEndOffset) {
          this.logger.info(`truncating ${followed.partition.key} from ${log.logEndOffset} to ${target}`);
          log.truncateTo(target as Offset);
        }
        followed.needsTruncation = false;
      }
    }
  }

  /**
   * Kafka's AbstractFetcherThread.fetchOffsetAndTruncate, after an OFFSET_OUT_OF_RANGE: the leader's log end
   * below this log's end means this log has records the leader never had (the leader could not place this log's
   * last epoch, or an unclean election): truncate to the leader's end and fetch from there. Otherwise this log is
   * behind the leader's log start: start again empty at it. Asking OffsetForLeaderEpoch again instead (as Brook
   * did) answered nothing usable when the leader knew none of this log's epochs, and the follower, whose high
   * watermark was past the leader's end, fetched the same offset again, forever.
   */
  private async resolveOutOfRange(endPoint: LeaderEndPoint): Promise<void> {
    for (const followed of [...this.partitions.values()]) {
      if (!followed.outOfRange || followed.needsTruncation) continue;
      const { topic, partition } = followed.partition;
      const latest = await endPoint.fetchLatestOffset(topic, partition, followed.epoch);
      if (this.partitions.get(followed.partition.key) !== followed || !followed.outOfRange) continue;
      if (latest.errorCode !== ErrorCode.NONE) continue;
      // Read after each wait: a move between log directories may have replaced the partition's log meanwhile.
      let log = followed.partition.log;
      if (latest.offset < log.logEndOffset) {
        const belowHw =
          latest.offset < log.highWatermark ? ` (below its high watermark ${log.highWatermark})` : '';
        this.logger.warn(
          `truncating ${followed.partition.key} from ${log.logEndOffset} to the leader's log end ${latest.offset}${belowHw}`,
        );
        log.truncateTo(latest.offset as Offset);
        followed.outOfRange = false;
        continue;
      }
      const earliest = await endPoint.fetchEarliestOffset(topic, partition, followed.epoch);
      if (this.partitions.get(followed.partition.key) !== followed || !followed.outOfRange) continue;
      if (earliest.errorCode !== ErrorCode.NONE) continue;
      log = followed.partition.log;
      if (earliest.offset > log.logEndOffset) {
        this.logger.warn(
          `${followed.partition.key}: log end ${log.logEndOffset} below the leader's log start ${earliest.offset}; starting again there`,
        );
        log.truncateFullyAndStartAt(earliest.offset as Offset);
      }
      followed.outOfRange = false;
    }
  }

  /** KIP-320: the leader answered a diverging epoch; truncate where the logs agree (divergenceTruncationOffset). */
  private truncateToDivergence(followed: Followed, leaderEpoch: number, leaderEnd: number): void {
    const log = followed.partition.log;
    const target = divergenceTruncationOffset(log, leaderEpoch, leaderEnd);
    if (target >= log.logEndOffset) {
      // No record to cut, but maybe an epoch this broker started as leader and wrote nothing in: truncating to the
      // log end drops it, and the next fetch names the epoch before it. With nothing dropped (it should not
      // happen), find the point with OffsetForLeaderEpoch rather than fetch the same way again.
      const epochBefore = log.epochCache.latestEpoch;
      log.truncateTo(log.logEndOffset);
      if (log.epochCache.latestEpoch === epochBefore) followed.needsTruncation = true;
      return;
    }
    this.logger.info(
      `truncating ${followed.partition.key} from ${log.logEndOffset} to ${target} (diverging epoch ${leaderEpoch} ending at ${leaderEnd})`,
    );
    log.truncateTo(target as Offset);
  }

  private async fetchOnce(endPoint: LeaderEndPoint): Promise<void> {
    const quota = this.settings.quota;
    const nowMs = this.clock.nowMs();
    const overQuota = quota?.isQuotaExceeded(nowMs) ?? false;
    // Kafka's shouldFollowerThrottle: a throttled replica out of the ISR is not fetched while the rate is over.
    const throttled = (f: Followed): boolean =>
      quota !== undefined &&
      !f.partition.isr.includes(this.settings.brokerId) &&
      quota.isThrottled(f.partition.topic, f.partition.partition);
    const ready = [...this.partitions.values()].filter(
      (f) => !f.needsTruncation && !f.outOfRange && !(overQuota && throttled(f)),
    );
    if (ready.length === 0) {
      // Everything here is throttled: wait as Kafka's fetcher does with an empty fetch.
      if (overQuota) await sleep(this.clock, this.settings.backoffMs);
      return;
    }
    const byTopic = new Map<string, Followed[]>();
    // The state and fetch offset each partition is asked for: an answer applies only to them (Kafka's check of
    // the fetch state's epoch and offset before processing a partition's data).
    const sent = new Map<Followed, number>();
    for (const f of ready) {
      const list = byTopic.get(f.partition.topic) ?? [];
      list.push(f);
      byTopic.set(f.partition.topic, list);
      sent.set(f, f.partition.log.logEndOffset);
    }
    const response = await endPoint.fetch(
      {
        clusterId: null,
        replicaId: this.settings.brokerId,
        replicaState: {
          replicaId: this.settings.brokerId,
          replicaEpoch: BigInt(this.settings.brokerEpoch?.() ?? -1),
        },
        maxWaitMs: this.settings.waitMaxMs,
        minBytes: this.settings.minBytes,
        maxBytes: this.settings.responseMaxBytes,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [...byTopic].map(([topic, list]) => ({
          topic,
          topicId: list[0]!.partition.topicId || ZERO_UUID,
          partitions: list.map((f) => ({
            partition: f.partition.partition,
            currentLeaderEpoch: f.epoch,
            fetchOffset: BigInt(f.partition.log.logEndOffset),
            // KIP-320: the leader answers a diverging epoch when this log went past where the logs agree.
            lastFetchedEpoch: f.partition.log.epochCache.latestEpoch,
            logStartOffset: BigInt(f.partition.log.logStartOffset),
            partitionMaxBytes: this.settings.fetchMaxBytes,
            replicaDirectoryId: ZERO_UUID,
          })),
        })),
        forgottenTopicsData: [],
        rackId: '',
      },
      this.settings.waitMaxMs + this.settings.socketTimeoutMs,
    );
    let fenced = false;
    let throttledBytes = 0;
    for (const t of response.responses) {
      for (const p of t.partitions) {
        const followed = this.partitions.get(`${t.topic}-${p.partitionIndex}`);
        if (followed === undefined) continue;
        const fetchOffset = sent.get(followed);
        if (
          fetchOffset === undefined ||
          followed.needsTruncation ||
          followed.outOfRange ||
          fetchOffset !== followed.partition.log.logEndOffset
        )
          continue;
        if (
          p.errorCode === ErrorCode.NONE &&
          (p.divergingEpoch.epoch >= 0 || p.divergingEpoch.endOffset >= 0n)
        ) {
          this.truncateToDivergence(followed, p.divergingEpoch.epoch, Number(p.divergingEpoch.endOffset));
        } else if (p.errorCode === ErrorCode.NONE) {
          if (throttled(followed)) throttledBytes += p.records?.length ?? 0;
          const before = followed.partition.log.highWatermark;
          followed.leaderHighWatermark = Number(p.highWatermark) as Offset;
          followed.partition.appendAsFollower(p.records ?? EMPTY, followed.leaderHighWatermark);
          if (followed.partition.log.highWatermark !== before) this.onHighWatermark(followed.partition);
          followed.partition.followLeaderLogStart(Number(p.logStartOffset));
        } else if (p.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
          // This log's end is past the leader's, or before its start: ask the leader where its log is.
          followed.outOfRange = true;
        } else {
          fenced = true;
        }
      }
    }
    quota?.record(throttledBytes, this.clock.nowMs());
    // Leadership moved or is moving: wait for the controller's LeaderAndIsr rather than spin.
    if (fenced) await sleep(this.clock, this.settings.backoffMs);
  }
}

const EMPTY = Buffer.alloc(0);

/** Error codes of a local write that failed because of the disk, not of the leader or the network. */
const STORAGE_ERROR_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO']);

export function isStorageError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && STORAGE_ERROR_CODES.has(code);
}

/** replica.fetch.backoff.ms doubled for each storage failure in a row, at most 32 times it. */
export function storageBackoffMs(backoffMs: number, failuresInARow: number): number {
  return backoffMs * 2 ** Math.min(Math.max(failuresInARow - 1, 0), 5);
}

/**
 * Where a follower truncates when the leader answers a diverging epoch (KIP-320): the end of the latest epoch
 * both logs may share. Kafka's AbstractFetcherThread.getOffsetTruncationState:
 * - no end offset: back to the high watermark;
 * - an end offset without an epoch: to that offset;
 * - an epoch this log does not have (it kept no epochs then): to the leader's end offset;
 * - an epoch this log has: to the smaller of both ends of it;
 * - otherwise (this log's floor entry is an older epoch): to the end of that epoch here, and the next fetch, whose
 *   last fetched epoch is then older, asks the leader again.
 * Never past this log's end.
 */
export function divergenceTruncationOffset(
  log: Pick<Log, 'logEndOffset' | 'highWatermark' | 'epochCache'>,
  leaderEpoch: number,
  leaderEnd: number,
): number {
  let target: number;
  if (leaderEnd < 0) target = log.highWatermark;
  else if (leaderEpoch < 0) target = leaderEnd;
  else {
    const mine = log.epochCache.endOffsetFor(leaderEpoch as LeaderEpoch, log.logEndOffset);
    if (mine.endOffset < 0) target = leaderEnd;
    else if (mine.epoch === leaderEpoch) target = Math.min(mine.endOffset, leaderEnd);
    else target = mine.endOffset;
  }
  return Math.min(target, log.logEndOffset);
}

/** The key of a fetcher: the leader it fetches from and its number among that leader's fetchers. */
function fetcherKey(leaderId: number, fetcherId: number): string {
  return `${leaderId}-${fetcherId}`;
}

export class ReplicaFetchers {
  private readonly fetchers = new Map<string, LeaderFetcher>();
  private shuttingDown = false;
  private readonly endPoints: LeaderEndPoints;
  private readonly clock: Clock;
  /** num.replica.fetchers now: fetchers per source broker. */
  private fetchersPerBroker: number;

  constructor(
    private readonly settings: FetcherSettings,
    private readonly replicas: Pick<ReplicaManager, 'all'>,
    metadata: Pick<MetadataCache, 'endpointFor'>,
    private readonly onHighWatermark: (p: Partition) => void,
    private readonly logger: Logger,
    environment: FetcherEnvironment = {},
  ) {
    this.fetchersPerBroker = settings.numFetchers ?? 1;
    assert(
      Number.isInteger(this.fetchersPerBroker) && this.fetchersPerBroker >= 1,
      `num.replica.fetchers must be at least 1: ${this.fetchersPerBroker}`,
    );
    this.clock = environment.clock ?? systemClock;
    this.endPoints =
      environment.endPoints ??
      ((leaderId) => {
        const endpoint = metadata.endpointFor(leaderId, settings.listenerName);
        if (endpoint === undefined) return null;
        return new RemoteLeaderEndPoint(
          endpoint.host,
          endpoint.port,
          settings.brokerId,
          settings.socketTimeoutMs,
          settings.security,
          environment.framePool,
        );
      });
  }

  /** num.replica.fetchers in force. */
  get numFetchers(): number {
    return this.fetchersPerBroker;
  }

  private fetcherIdOf(p: Partition): number {
    return fetcherIdOf(p.topic, p.partition, this.fetchersPerBroker);
  }

  /** The fetcher for (leader, fetcher id), made when missing; not started. */
  private fetcherFor(leaderId: number, fetcherId: number): LeaderFetcher {
    const key = fetcherKey(leaderId, fetcherId);
    let fetcher = this.fetchers.get(key);
    if (fetcher === undefined) {
      fetcher = new LeaderFetcher(
        leaderId,
        fetcherId,
        this.settings,
        this.endPoints,
        this.clock,
        this.onHighWatermark,
        this.logger,
      );
      this.fetchers.set(key, fetcher);
    }
    return fetcher;
  }

  /**
   * Re-reads which partitions this broker follows, and from whom (after every LeaderAndIsr). While shutting
   * down it only stops: a partition whose leader or leader epoch changed is no longer fetched, nothing is added.
   */
  refresh(): void {
    const wanted = new Map<string, { leaderId: number; fetcherId: number; partitions: Partition[] }>();
    for (const p of this.replicas.all()) {
      if (p.isLeader || p.leaderId < 0) continue;
      const fetcherId = this.fetcherIdOf(p);
      const key = fetcherKey(p.leaderId, fetcherId);
      const entry = wanted.get(key) ?? { leaderId: p.leaderId, fetcherId, partitions: [] };
      entry.partitions.push(p);
      wanted.set(key, entry);
    }
    for (const [key, fetcher] of this.fetchers) {
      const keep = new Map((wanted.get(key)?.partitions ?? []).map((p) => [p.key, p]));
      for (const [partitionKey, followed] of [...fetcher.partitions]) {
        const current = keep.get(partitionKey);
        const changed = current !== followed.partition || current.leaderEpoch !== followed.epoch;
        if (current === undefined || (this.shuttingDown && changed)) fetcher.partitions.delete(partitionKey);
      }
      if (fetcher.partitions.size === 0 && (this.shuttingDown || !wanted.has(key))) {
        fetcher.stop();
        this.fetchers.delete(key);
      }
    }
    if (this.shuttingDown) return;
    for (const { leaderId, fetcherId, partitions } of wanted.values()) {
      const fetcher = this.fetcherFor(leaderId, fetcherId);
      for (const p of partitions) {
        const known = fetcher.partitions.get(p.key);
        if (known !== undefined && known.partition === p && known.epoch === p.leaderEpoch) continue;
        fetcher.partitions.set(p.key, {
          partition: p,
          epoch: p.leaderEpoch,
          needsTruncation: true,
          outOfRange: false,
        });
      }
      fetcher.start();
    }
  }

  /**
   * num.replica.fetchers changed (a dynamic broker config): each followed partition moves to the fetcher its id
   * names under the new count, with its fetch state (epoch, pending truncation, out-of-range recovery, the
   * leader's last high watermark), as Kafka's resizeThreadPool re-adds partitions at their current fetch state.
   * The fetch offset is the log end offset, so nothing is fetched twice or skipped. A fetcher left without
   * partitions stops; an answer it still awaits is dropped, as it is for any partition it no longer holds.
   */
  resize(numFetchers: number): void {
    assert(
      Number.isInteger(numFetchers) && numFetchers >= 1,
      `num.replica.fetchers must be at least 1: ${numFetchers}`,
    );
    if (numFetchers === this.fetchersPerBroker) return;
    const before = this.fetchersPerBroker;
    this.fetchersPerBroker = numFetchers;
    if (this.shuttingDown) return;
    const touched = new Set<LeaderFetcher>();
    for (const [key, fetcher] of [...this.fetchers]) {
      for (const [partitionKey, followed] of [...fetcher.partitions]) {
        const fetcherId = this.fetcherIdOf(followed.partition);
        if (fetcherId === fetcher.fetcherId) continue;
        fetcher.partitions.delete(partitionKey);
        const target = this.fetcherFor(fetcher.leaderId, fetcherId);
        assert(!target.partitions.has(partitionKey), `${partitionKey} followed by two fetchers`);
        target.partitions.set(partitionKey, followed);
        touched.add(target);
      }
      if (fetcher.partitions.size === 0) {
        fetcher.stop();
        this.fetchers.delete(key);
      }
    }
    for (const fetcher of touched)
      if (this.fetchers.has(fetcherKey(fetcher.leaderId, fetcher.fetcherId))) fetcher.start();
    this.logger.info(`num.replica.fetchers ${before} -> ${numFetchers}: ${this.fetchers.size} fetchers run`);
  }

  /** The broker is stopping: from now on refresh() never starts fetching (see the file header). */
  beginShutdown(): void {
    this.shuttingDown = true;
  }

  /**
   * Each followed partition's lag behind its leader (Kafka's FetcherLagMetrics ConsumerLag): the leader's high
   * watermark in its last answer minus this replica's log end offset, at least 0; partitions not fetched yet are
   * left out. The client id is the fetcher's, named as Kafka names its fetcher threads
   * (ReplicaFetcherThread-<fetcher id>-<source broker id>).
   */
  *followerLags(): Generator<{ clientId: string; topic: string; partition: number; lag: number }> {
    for (const fetcher of this.fetchers.values()) {
      const clientId = `ReplicaFetcherThread-${fetcher.fetcherId}-${fetcher.leaderId}`;
      for (const f of fetcher.partitions.values()) {
        if (f.leaderHighWatermark === undefined) continue;
        const lag = Math.max(0, f.leaderHighWatermark - f.partition.log.logEndOffset);
        yield { clientId, topic: f.partition.topic, partition: f.partition.partition, lag };
      }
    }
  }

  /** Stops every fetcher for good; a later refresh() starts none. */
  stop(): void {
    this.shuttingDown = true;
    for (const f of this.fetchers.values()) f.stop();
    this.fetchers.clear();
  }

  /** Ids of the leaders fetched from now, for tests and diagnostics. */
  get leaderIds(): number[] {
    return [...new Set([...this.fetchers.values()].map((f) => f.leaderId))];
  }

  /** Which fetcher follows each partition now: partition key -> [leader id, fetcher id], for tests and diagnostics. */
  assignment(): Map<string, [number, number]> {
    const out = new Map<string, [number, number]>();
    for (const f of this.fetchers.values())
      for (const key of f.partitions.keys()) out.set(key, [f.leaderId, f.fetcherId]);
    return out;
  }
}
