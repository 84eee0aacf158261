// The client's view of the cluster: bootstrap, the metadata cache (brokers, topics, partition leaders), one
// connection per broker, and retries with exponential backoff. Producer, consumer and admin each own one Cluster
// and send every request through it.
//
// Metadata is fetched for the topics the owner has asked about (the "interesting" set) and refreshed when it is
// older than metadata.max.age.ms, or when a caller reports a stale leader (invalidate): at the next topic() call,
// or from refreshIfDue(), which a loop that reads cached leaders (the consumer's fetcher) calls as it goes, at most
// once per retry.backoff.ms (Kafka's Metadata.requestUpdate and timeToNextUpdate). metadataVersion counts the
// refreshes done, so that such a caller can wait for one that began after the error. Concurrent refreshes share
// one request. Connections are opened lazily and reopened after a failure.

import { settleWithin } from '../common/deadline.js';
import type { MetadataResponse } from '../protocol/messages/03-metadata.js';
import { ZERO_UUID } from '../protocol/messages/codec-support.js';
import { ApiKey } from '../protocol/registry.js';
import { Connection, type RequestOptions } from './connection.js';
import {
  CallTimeoutError,
  ClientStateError,
  ConnectionError,
  isRetriableError,
  KafkaClientError,
  KafkaProtocolError,
  RequestTimeoutError,
} from './errors.js';
import { type BrokerConnectionState, leastLoadedBroker, ReconnectBackoff } from './least-loaded.js';
import {
  type ClientOptions,
  parseHostPort,
  type ResolvedClientOptions,
  resolveClientOptions,
} from './options.js';
import { epochOrNone } from './requests.js';

/** A broker of the cluster as Metadata describes it. */
export interface BrokerInfo {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
}

/** A partition's leader, leader epoch, replicas and in-sync replicas from Metadata. */
export interface PartitionInfo {
  partition: number;
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
  errorCode: number;
}

/** A topic from Metadata: its id, error and partitions. */
export interface TopicInfo {
  name: string;
  topicId: string;
  isInternal: boolean;
  errorCode: number;
  partitions: PartitionInfo[];
}

export interface MetadataSnapshot {
  clusterId: string | null;
  controllerId: number;
  brokers: Map<number, BrokerInfo>;
  topics: Map<string, TopicInfo>;
}

/**
 * The topic as the client keeps it after a Metadata answer: a partition whose leader epoch there is older than the
 * one already known keeps what is known (Kafka's Metadata.updateLatestMetadata), since the answering broker has not
 * heard of the newest election yet (UpdateMetadata reaches brokers one by one) or was deposed without knowing it.
 * Taken, it would send produce and fetch requests to the old leader, and make a consumer validate its position
 * there (an epoch the old leader never saw reads as unknown, and auto.offset.reset moves the position). A new topic
 * id (the topic deleted and created again) takes the answer whole.
 */
export function withNewestLeaderEpochs(known: TopicInfo | undefined, fresh: TopicInfo): TopicInfo {
  if (known === undefined || (fresh.topicId !== ZERO_UUID && fresh.topicId !== known.topicId)) return fresh;
  let kept = false;
  const partitions = fresh.partitions.map((p) => {
    const old = known.partitions.find((k) => k.partition === p.partition);
    if (old === undefined || p.leaderEpoch < 0 || old.leaderEpoch <= p.leaderEpoch) return p;
    kept = true;
    return old;
  });
  return kept ? { ...fresh, partitions } : fresh;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** `attempt` settled, or a CallTimeoutError at the deadline if it has not settled by then. */
export function beforeDeadline<T>(attempt: Promise<T>, deadlineMs: number, attemptIndex: number): Promise<T> {
  if (deadlineMs === Number.POSITIVE_INFINITY) return attempt;
  return settleWithin(
    attempt,
    deadlineMs - Date.now(),
    () => new CallTimeoutError(attemptIndex + 1, new RequestTimeoutError('the attempt was still running')),
  );
}

/**
 * The id under which the reconnect backoff of bootstrap server `index` is kept: -1, -2, ... as Kafka's clients name
 * the bootstrap nodes, so that no broker id (never negative) shares it.
 */
function bootstrapNodeId(index: number): number {
  return -1 - index;
}

/**
 * The client's view of the cluster: bootstrap, cached metadata with refresh, one connection per broker, and
 * retries with backoff. Producer, Consumer and Admin each own one.
 */
export class Cluster {
  /** The client options with every default filled in, read by whoever owns this cluster view. */
  readonly options: ResolvedClientOptions;
  private readonly connections = new Map<number, Promise<Connection>>();
  /** The connections of `connections` that have opened: the others are still being opened. */
  private readonly opened = new Map<number, Connection>();
  /** Brokers a connection attempt failed to, not picked for any-broker requests until their backoff ends. */
  private readonly reconnectBackoff: ReconnectBackoff;
  /** Per broker, the connection lookup of the latest send() not yet ended: the next one waits for it. */
  private readonly lookups = new Map<number, Promise<Connection>>();
  private bootstrapConnection: Promise<Connection> | null = null;
  /** Connections being opened (socket, ApiVersions, SASL): close() ends them rather than wait for their broker. */
  private readonly opening = new Set<Connection>();
  private bootstrapIndex = 0;
  private metadata: MetadataSnapshot = {
    clusterId: null,
    controllerId: -1,
    brokers: new Map(),
    topics: new Map(),
  };
  private metadataAtMs = 0;
  /** Metadata responses taken so far. */
  private version = 0;
  /** When the last refresh ended, answered or failed: refreshIfDue() waits retry.backoff.ms after it. */
  private refreshEndedMs = 0;
  private refreshing: Promise<MetadataSnapshot> | null = null;
  private readonly interesting = new Set<string>();
  private closed = false;
  /** Whether metadata requests may create topics (the producer's and the consumer's allow.auto.create.topics). */
  allowAutoTopicCreation = false;

  constructor(options: ClientOptions) {
    this.options = resolveClientOptions(options);
    this.reconnectBackoff = new ReconnectBackoff(
      this.options.reconnectBackoffMs,
      this.options.reconnectBackoffMaxMs,
    );
  }

  /** The cached metadata, possibly stale: callers that need it fresh call refreshMetadata(). */
  get snapshot(): MetadataSnapshot {
    return this.metadata;
  }

  private checkOpen(): void {
    if (this.closed) throw new ClientStateError('the client is closed');
  }

  /**
   * A connection to any broker: the least loaded known broker (leastLoadedBroker: an idle open connection, else the
   * least busy, else one being opened, else a broker out of reconnect backoff), else the bootstrap servers in turn
   * when metadata knows no broker, none is usable, or the chosen one cannot be reached.
   */
  async anyConnection(): Promise<Connection> {
    this.checkOpen();
    const known = [...this.metadata.brokers.keys()];
    const id = leastLoadedBroker(
      known,
      (nodeId) => this.connectionState(nodeId),
      this.reconnectBackoff,
      Date.now(),
    );
    if (id !== null) {
      try {
        return await this.connection(id);
      } catch {
        // Fall back to the bootstrap list: the broker may have gone.
      }
    }
    return this.bootstrap();
  }

  private connectionState(nodeId: number): BrokerConnectionState {
    const open = this.opened.get(nodeId);
    if (open?.isOpen) return { kind: 'ready', load: open.load, throttled: open.throttled };
    if (open === undefined && this.connections.has(nodeId)) return { kind: 'connecting' };
    return { kind: 'idle' };
  }

  private async bootstrap(): Promise<Connection> {
    if (this.bootstrapConnection !== null) {
      try {
        const c = await this.bootstrapConnection;
        if (c.isOpen) return c;
      } catch {
        // Try the next server below.
      }
    }
    const servers = this.options.bootstrapServers;
    const waitMs = Math.min(
      ...servers.map((_, index) => this.reconnectBackoff.waitMs(bootstrapNodeId(index), Date.now())),
    );
    if (waitMs > 0) {
      // Every bootstrap server is in its reconnect backoff: wait for the first to come out, then look again (another
      // caller may have connected meanwhile).
      await sleep(waitMs);
      this.checkOpen();
      return this.bootstrap();
    }
    let lastError: unknown;
    for (let i = 0; i < servers.length; i++) {
      const index = (this.bootstrapIndex + i) % servers.length;
      const nodeId = bootstrapNodeId(index);
      if (!this.reconnectBackoff.canConnect(nodeId, Date.now())) continue;
      const { host, port } = parseHostPort(servers[index]!);
      this.reconnectBackoff.attempted(nodeId, Date.now());
      const attempt = this.connect(host, port);
      this.bootstrapConnection = attempt;
      try {
        const c = await attempt;
        this.reconnectBackoff.connected(nodeId);
        c.onClose(() => this.reconnectBackoff.failed(nodeId, Date.now()));
        this.bootstrapIndex = index;
        return c;
      } catch (err) {
        this.reconnectBackoff.failed(nodeId, Date.now());
        lastError = err;
      }
    }
    this.bootstrapConnection = null;
    this.bootstrapIndex++;
    throw new ConnectionError(
      `no bootstrap server reachable (${servers.join(',')}): ${(lastError as Error)?.message ?? ''}`,
      { cause: lastError },
    );
  }

  /**
   * The connection to a broker by id, opened on first use and reopened after it failed or closed, once the broker's
   * reconnect backoff has run out (waiting for it, at most reconnect.backoff.max.ms and its jitter).
   */
  async connection(nodeId: number): Promise<Connection> {
    this.checkOpen();
    const existing = this.connections.get(nodeId);
    if (existing !== undefined) {
      try {
        const c = await existing;
        if (c.isOpen) return c;
      } catch {
        // Reconnect below.
      }
      if (this.connections.get(nodeId) === existing) {
        this.connections.delete(nodeId);
        this.opened.delete(nodeId);
      } else return this.connection(nodeId);
    }
    const broker = this.metadata.brokers.get(nodeId);
    if (broker === undefined) {
      await this.refreshMetadata();
      if (!this.metadata.brokers.has(nodeId)) {
        throw new KafkaClientError(`broker ${nodeId} is not in the cluster metadata`, true);
      }
      return this.connection(nodeId);
    }
    const waitMs = this.reconnectBackoff.waitMs(nodeId, Date.now());
    if (waitMs > 0) {
      // As Kafka's NetworkClient.ready refuses a node whose reconnect backoff runs, and its caller waits: every path
      // to a broker that keeps failing (the sender, the fetcher, the coordinator calls) reconnects at most this
      // often, whatever its own retry backoff. Another caller may have connected meanwhile: look again.
      await sleep(waitMs);
      return this.connection(nodeId);
    }
    this.opened.delete(nodeId);
    this.reconnectBackoff.attempted(nodeId, Date.now());
    const attempt = this.connect(broker.host, broker.port);
    this.connections.set(nodeId, attempt);
    attempt.then(
      (c) => {
        this.reconnectBackoff.connected(nodeId);
        // A connection that opened and then dropped backs off too (Kafka's disconnected(), from any state).
        c.onClose(() => this.reconnectBackoff.failed(nodeId, Date.now()));
        if (this.connections.get(nodeId) === attempt) this.opened.set(nodeId, c);
      },
      () => {
        this.reconnectBackoff.failed(nodeId, Date.now());
        if (this.connections.get(nodeId) === attempt) this.connections.delete(nodeId);
      },
    );
    return attempt;
  }

  /**
   * Opens a connection, kept in `opening` until it has opened or failed. None once closed: a lookup that was waiting
   * on a connection close() ended would otherwise open another, which nothing would close.
   */
  private connect(host: string, port: number): Promise<Connection> {
    if (this.closed) return Promise.reject(new ClientStateError('the client is closed'));
    let opened: Connection | undefined;
    const attempt = Connection.connect(host, port, this.options, (c) => {
      opened = c;
      this.opening.add(c);
    });
    const settled = (): void => {
      if (opened !== undefined) this.opening.delete(opened);
    };
    attempt.then(settled, settled);
    return attempt;
  }

  /**
   * The open connection to a broker, or null when there is none: nothing is connected or reconnected (Kafka's
   * client.isUnavailable check, for work that is only worth doing on a live connection, like closing a session).
   */
  async openConnection(nodeId: number): Promise<Connection | null> {
    const existing = this.connections.get(nodeId);
    if (existing === undefined) return null;
    try {
      const c = await existing;
      return c.isOpen ? c : null;
    } catch {
      return null;
    }
  }

  /**
   * Sends to one broker by id. Requests to a broker go onto its connection in the order send() was called, also
   * while the connection is being opened: the idempotent producer sends a partition's batches in separate requests
   * and the broker appends them in arrival order. Each call's connection lookup starts only once the previous
   * call's has ended, and that call has queued its request (its continuation runs before the next lookup's), so
   * no call overtakes an earlier one however many awaits its own lookup takes (a new connection takes more than
   * one already open: a second batch used to leave first, its sequence refused as out of order for ever).
   */
  async send<T>(nodeId: number, apiKey: number, body: unknown, options?: RequestOptions): Promise<T> {
    const c = await this.connectionInOrder(nodeId);
    return c.request<T>(apiKey, body, options);
  }

  /**
   * As send(), for a request whose body depends on the version it goes out with (the consumer's Fetch: by topic
   * name up to v12, by id from v13): `body` is built once the broker's connection has negotiated it, with the
   * highest version both sides support up to `options.maxVersion`.
   */
  async sendForVersion<T>(
    nodeId: number,
    apiKey: number,
    body: (version: number) => unknown,
    options: RequestOptions = {},
  ): Promise<{ response: T; version: number }> {
    const c = await this.connectionInOrder(nodeId);
    const version = c.pickVersion(apiKey, options.maxVersion);
    const response = await c.request<T>(apiKey, body(version), { ...options, version });
    return { response, version };
  }

  /**
   * The connection to a broker, once the lookups of every earlier send() to it have ended (see send()). Not async:
   * the caller awaits the lookup itself, so that it queues its request before the next call's lookup goes on.
   */
  private connectionInOrder(nodeId: number): Promise<Connection> {
    const previous = this.lookups.get(nodeId);
    const lookup =
      previous === undefined
        ? this.connection(nodeId)
        : previous.then(
            () => this.connection(nodeId),
            () => this.connection(nodeId),
          );
    this.lookups.set(nodeId, lookup);
    const done = (): void => {
      if (this.lookups.get(nodeId) === lookup) this.lookups.delete(nodeId);
    };
    lookup.then(done, done);
    return lookup;
  }

  /** Sends to any broker. */
  async sendAny<T>(apiKey: number, body: unknown, options?: RequestOptions): Promise<T> {
    const c = await this.anyConnection();
    return c.request<T>(apiKey, body, options);
  }

  /** Adds topics to the set kept in metadata. */
  addTopics(topics: Iterable<string>): void {
    for (const t of topics) this.interesting.add(t);
  }

  /** Refreshes metadata for the interesting topics plus `extra`; concurrent calls share one request. */
  refreshMetadata(extra: Iterable<string> = []): Promise<MetadataSnapshot> {
    this.addTopics(extra);
    if (this.refreshing === null) {
      this.refreshing = this.withRetry(() => this.fetchMetadata([...this.interesting])).finally(() => {
        this.refreshing = null;
        this.refreshEndedMs = Date.now();
      });
    }
    return this.refreshing;
  }

  /** Metadata of all topics in the cluster (admin listTopics), without changing the interesting set. */
  async fetchMetadata(topics: string[] | null): Promise<MetadataSnapshot> {
    const c = await this.anyConnection();
    const res = await c.request<MetadataResponse>(ApiKey.METADATA, {
      topics: topics === null ? null : topics.map((name) => ({ topicId: ZERO_UUID, name })),
      allowAutoTopicCreation: this.allowAutoTopicCreation,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    const snapshot = this.toSnapshot(res);
    // A full listing replaces the view; a partial one updates the topics it names. Neither takes a partition's
    // older leader epoch (withNewestLeaderEpochs).
    const known = this.metadata.topics;
    const fresh = new Map(
      [...snapshot.topics].map(([name, t]) => [name, withNewestLeaderEpochs(known.get(name), t)] as const),
    );
    const merged: MetadataSnapshot = {
      clusterId: snapshot.clusterId,
      controllerId: snapshot.controllerId,
      brokers: snapshot.brokers,
      topics: topics === null ? fresh : new Map([...known, ...fresh]),
    };
    this.metadata = merged;
    this.metadataAtMs = Date.now();
    this.version++;
    for (const id of this.connections.keys()) {
      if (!merged.brokers.has(id)) this.dropConnection(id);
    }
    return snapshot;
  }

  private toSnapshot(res: MetadataResponse): MetadataSnapshot {
    const brokers = new Map<number, BrokerInfo>();
    for (const b of res.brokers)
      brokers.set(b.nodeId, { nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack });
    const topics = new Map<string, TopicInfo>();
    for (const t of res.topics) {
      if (t.name === null) continue;
      const partitions = t.partitions
        .map((p) => ({
          partition: p.partitionIndex,
          leader: p.leaderId,
          leaderEpoch: p.leaderEpoch,
          replicas: p.replicaNodes,
          isr: p.isrNodes,
          offlineReplicas: p.offlineReplicas,
          errorCode: p.errorCode,
        }))
        .sort((a, b) => a.partition - b.partition);
      topics.set(t.name, {
        name: t.name,
        topicId: t.topicId,
        isInternal: t.isInternal,
        errorCode: t.errorCode,
        partitions,
      });
    }
    return { clusterId: res.clusterId, controllerId: res.controllerId, brokers, topics };
  }

  private dropConnection(nodeId: number): void {
    const c = this.connections.get(nodeId);
    this.connections.delete(nodeId);
    this.opened.delete(nodeId);
    c?.then((conn) => conn.close()).catch(() => {});
  }

  /** Metadata of a topic, refreshed when missing or stale; throws the topic's error (retried first). */
  async topic(name: string): Promise<TopicInfo> {
    return this.withRetry(async () => {
      let t = this.metadata.topics.get(name);
      if (
        t === undefined ||
        t.errorCode !== 0 ||
        Date.now() - this.metadataAtMs > this.options.metadataMaxAgeMs
      ) {
        await this.refreshMetadata([name]);
        t = this.metadata.topics.get(name);
      }
      if (t === undefined) throw new KafkaProtocolError(3, `topic ${name} is not in the metadata`);
      if (t.errorCode !== 0) {
        this.metadata.topics.delete(name);
        throw new KafkaProtocolError(t.errorCode, `topic ${name}`);
      }
      return t;
    });
  }

  /** The leader of a partition from cached metadata, or -1 when unknown. */
  leaderOf(topic: string, partition: number): number {
    const p = this.metadata.topics.get(topic)?.partitions[partition];
    return p === undefined || p.partition !== partition ? -1 : p.leader;
  }

  /**
   * The leader epoch of a partition from cached metadata, or -1 when unknown: what Kafka's consumer sends as the
   * currentLeaderEpoch of its Fetch and ListOffsets requests, so that a stale leader refuses them.
   */
  leaderEpochOf(topic: string, partition: number): number {
    const p = this.metadata.topics.get(topic)?.partitions[partition];
    return p === undefined || p.partition !== partition ? -1 : epochOrNone(p.leaderEpoch);
  }

  /** Marks metadata stale, so the next topic() or refreshIfDue() call refreshes it. */
  invalidate(): void {
    this.metadataAtMs = 0;
  }

  /** How many metadata responses the cache has taken; moves with every refresh. */
  get metadataVersion(): number {
    return this.version;
  }

  /**
   * Starts a refresh of the interesting topics when one is due: the metadata was marked stale or is older than
   * metadata.max.age.ms, none is in flight, and retry.backoff.ms has passed since the last one ended. Answers
   * the refresh, or null when none was started.
   */
  refreshIfDue(now = Date.now()): Promise<MetadataSnapshot> | null {
    if (this.closed || this.refreshing !== null) return null;
    if (now - this.metadataAtMs <= this.options.metadataMaxAgeMs) return null;
    if (now - this.refreshEndedMs < this.options.retryBackoffMs) return null;
    return this.refreshMetadata();
  }

  /** The backoff before retry number `attempt` (0-based): exponential with jitter, capped. */
  backoffMs(attempt: number): number {
    const base = Math.min(this.options.retryBackoffMaxMs, this.options.retryBackoffMs * 2 ** attempt);
    return base * (0.8 + Math.random() * 0.4);
  }

  /**
   * Waits the backoff before retry number `attempt` (0-based). When the retry would start at or past `deadlineMs`
   * (epoch ms), the wait ends at the deadline instead and throws CallTimeoutError, `lastFailure` as its cause.
   */
  async backoffUntil(attempt: number, deadlineMs: number, lastFailure: unknown): Promise<void> {
    const backoff = this.backoffMs(attempt);
    const left = deadlineMs - Date.now();
    if (left <= backoff) {
      await sleep(Math.max(0, left));
      throw new CallTimeoutError(attempt + 1, lastFailure);
    }
    await sleep(backoff);
  }

  /**
   * Runs fn, retrying retriable failures `retries` times with backoff, refreshing metadata in between. With a
   * deadline (epoch ms), as a call of Kafka's admin client, the call also ends there: an attempt still running or
   * a retry that would start later fails it with CallTimeoutError (a RequestTimeoutError), the last failure as its
   * cause.
   */
  async withRetry<T>(
    fn: (attempt: number) => Promise<T>,
    retries = this.options.retries,
    deadlineMs = Number.POSITIVE_INFINITY,
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await beforeDeadline(fn(attempt), deadlineMs, attempt);
      } catch (err) {
        if (this.closed || !isRetriableError(err) || attempt >= retries) throw err;
        if (err instanceof CallTimeoutError) throw err;
        this.invalidate();
        await this.backoffUntil(attempt, deadlineMs, err);
      }
    }
  }

  /** Closes every broker connection; later sends fail instead of reconnecting. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const all = [...this.connections.values()];
    if (this.bootstrapConnection !== null) all.push(this.bootstrapConnection);
    this.connections.clear();
    this.opened.clear();
    // A connection still being opened is ended now: its broker may never answer the handshake, and waiting for it
    // would hold close() up to the request timeout (Kafka's close ends connecting channels with the rest).
    for (const c of this.opening) c.close();
    this.opening.clear();
    await Promise.all(all.map((p) => p.then((c) => c.close()).catch(() => {})));
  }
}
