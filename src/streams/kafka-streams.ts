// KafkaStreams: runs a topology against a cluster. start() checks the configuration, creates the internal
// topics (repartition and changelog topics, see runtime/internal-topics.ts) and starts num.stream.threads
// stream threads; each is a member of the consumer group named by application.id. close() commits and writes the
// checkpoints; as Kafka Streams (internal.leave.group.on.close=false) its members stay in the group until their
// sessions time out, so an instance restarting within session.timeout.ms gets its tasks back without a rebalance;
// close(new CloseOptions().leaveGroup(true)) leaves at once (scaling down).
//
// States and their transitions are Kafka's: CREATED -> REBALANCING <-> RUNNING -> PENDING_SHUTDOWN ->
// NOT_RUNNING, and PENDING_ERROR -> ERROR when a thread dies of an error. The state listener hears each change.
//
// Where the threads run: with brook.topology.module each stream thread is a worker thread of its own
// (runtime/worker-thread.ts), which rebuilds the topology from that module, so an instance processes on
// num.stream.threads cores; without it (a topology that exists only as closures in this thread) the threads share
// this event loop: more group members and I/O concurrency, one core.

import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { Admin } from '../client/admin.js';
import { keyPartition } from '../client/partitioners.js';
import type { TopicPartition } from '../client/requests.js';
import type { Logger } from '../common/logger.js';
import {
  type ResolvedConfig,
  resolveConfig,
  StreamsConfigError,
  type StreamsProperties,
  withProcessId,
} from './config.js';
import { StreamsError } from './errors.js';
import type { StateRestoreListener } from './processor.js';
import { InvalidStateStoreException, type StoreQueryParameters } from './queryable.js';
import { GlobalStreamThread } from './runtime/global-thread.js';
import { ensureInternalTopics, type TopicLayout } from './runtime/internal-topics.js';
import { acquireProcessId, releaseProcessId } from './runtime/process-id.js';
import { StandbyUpdater } from './runtime/standby-updater.js';
import { StreamThread, type ThreadState } from './runtime/stream-thread.js';
import type { AssignmentInfo } from './runtime/streams-assignor.js';
import { topologyFingerprint } from './runtime/worker-protocol.js';
import { type LocalThread, WorkerStreamThread, workerStoreView } from './runtime/worker-thread.js';
import type { Topology } from './topology.js';

export type KafkaStreamsState =
  | 'CREATED'
  | 'REBALANCING'
  | 'RUNNING'
  | 'PENDING_SHUTDOWN'
  | 'NOT_RUNNING'
  | 'PENDING_ERROR'
  | 'ERROR';

export type StateListener = (newState: KafkaStreamsState, oldState: KafkaStreamsState) => void;

/** What to do after a stream thread died of an error (Kafka's StreamThreadExceptionResponse). */
export type StreamThreadExceptionResponse = 'REPLACE_THREAD' | 'SHUTDOWN_CLIENT' | 'SHUTDOWN_APPLICATION';

/**
 * Hears a thread's fatal error and answers what to do; no handler, or no answer, is SHUTDOWN_CLIENT, Kafka's
 * default. SHUTDOWN_APPLICATION stops every instance of the application through the streams assignor (KIP-671).
 */
export type StreamsUncaughtExceptionHandler = (error: Error) => StreamThreadExceptionResponse | undefined;

/** An instance's application.server (Kafka's HostInfo); `unavailable:-1` when not known. */
export interface HostInfo {
  host: string;
  port: number;
}

/** One instance of the application as the last assignment describes it (Kafka's StreamsMetadata). */
export interface StreamsMetadata {
  hostInfo: HostInfo;
  stateStoreNames: string[];
  topicPartitions: TopicPartition[];
  standbyStateStoreNames: string[];
  standbyTopicPartitions: TopicPartition[];
}

/** Where a key of a store lives (Kafka's KeyQueryMetadata). */
export interface KeyQueryMetadata {
  activeHost: HostInfo;
  standbyHosts: HostInfo[];
  partition: number;
}

/** Kafka's HostInfo.unavailable(): the host of a key whose task has no known instance. */
export const UNAVAILABLE_HOST: HostInfo = Object.freeze({ host: 'unavailable', port: -1 });

function hostInfo(endpoint: string): HostInfo {
  const at = endpoint.lastIndexOf(':');
  return { host: endpoint.slice(0, at), port: Number(endpoint.slice(at + 1)) };
}

/**
 * Kafka's KafkaStreams.CloseOptions: how long close() waits (default without end) and whether the threads'
 * consumers leave the group (default false: they stay until session.timeout.ms, Kafka Streams' default). With
 * leaveGroup(true) each thread's consumer sends LeaveGroup, a static member's (group.instance.id) as well: Kafka
 * removes static members (an admin RemoveMembers; KIP-1092/1153 consumers leave, static or not).
 */
export class CloseOptions {
  timeoutMs: number | undefined = undefined;
  leaveGroupValue = false;

  timeout(timeoutMs: number): this {
    this.timeoutMs = timeoutMs;
    return this;
  }

  leaveGroup(leaveGroup: boolean): this {
    this.leaveGroupValue = leaveGroup;
    return this;
  }
}

export class KafkaStreams {
  /** Kafka's nested class name: `new KafkaStreams.CloseOptions()`. */
  static readonly CloseOptions = CloseOptions;
  private config: ResolvedConfig;
  private readonly threads: LocalThread[] = [];
  private stateValue: KafkaStreamsState = 'CREATED';
  private listener: StateListener | null = null;
  private exceptionHandler: StreamsUncaughtExceptionHandler | null = null;
  private logger: (message: string) => void = () => {};
  private clientLogger: Logger | undefined;
  private restoreListener: StateRestoreListener | undefined;
  /** The close under way or done (close() may be called again, or time out and be called again). */
  private closing: Promise<void> | null = null;
  private layout: TopicLayout | null = null;
  private threadIndex = 0;
  private globalThread: GlobalStreamThread | null = null;
  /**
   * This instance's process id, as Kafka Streams': part of its threads' transactional.id under exactly-once;
   * kept in the state directory across restarts (runtime/process-id.ts).
   */
  private processIdValue: string | null = null;
  /** The instance's standby tasks, shared by its threads. */
  private standbys: StandbyUpdater | null = null;
  /** The newest assignment info any thread received: every instance's partitions by host. */
  private hosts: { generationId: number; info: AssignmentInfo } | null = null;

  constructor(
    private readonly topology: Topology,
    private readonly props: StreamsProperties,
  ) {
    this.config = resolveConfig(props, true);
    if (topology.sourceTopics().length === 0) throw new StreamsError('Topology has no source topics');
  }

  /**
   * A KafkaStreams whose stream threads run in worker threads: `specifier` (a file URL or path) names a module
   * whose export `exportName` (default buildTopology) returns the topology; it is built here once and in each
   * worker (brook.topology.module).
   */
  static async fromModule(
    specifier: string,
    props: StreamsProperties,
    exportName = 'buildTopology',
  ): Promise<KafkaStreams> {
    const all = { ...props, 'brook.topology.module': specifier, 'brook.topology.module.export': exportName };
    const url = resolveConfig(all, false).topologyModule!;
    const mod = (await import(url)) as Record<string, unknown>;
    const factory = mod[exportName];
    if (typeof factory !== 'function')
      throw new StreamsConfigError(
        `${specifier} has no function export ${exportName} that builds the topology`,
      );
    const fromModule = (mod.streamsProps ?? {}) as StreamsProperties;
    return new KafkaStreams(await (factory as () => Topology | Promise<Topology>)(), {
      ...fromModule,
      ...all,
    });
  }

  state(): KafkaStreamsState {
    return this.stateValue;
  }

  setStateListener(listener: StateListener): void {
    if (this.stateValue !== 'CREATED')
      throw new StreamsError('Can only set StateListener before calling start().');
    this.listener = listener;
  }

  setUncaughtExceptionHandler(handler: StreamsUncaughtExceptionHandler): void {
    this.exceptionHandler = handler;
  }

  /** Where log lines go (default: nowhere). */
  setLogger(logger: (message: string) => void): void {
    this.logger = logger;
  }

  /**
   * The logger of the stream threads' own clients (group membership: joins, syncs, heartbeat errors), for
   * diagnosing rebalances; default none. Threads in worker threads (brook.worker.threads) do not use it.
   */
  setClientLogger(logger: Logger): void {
    if (this.stateValue !== 'CREATED')
      throw new StreamsError('Can only set the client logger before start().');
    this.clientLogger = logger;
  }

  /**
   * Kafka's setGlobalStateRestoreListener, before start(): told of the restoration of active tasks' stores. With
   * stream threads in worker threads (brook.topology.module) it is not called: a function cannot reach a worker.
   */
  setGlobalStateRestoreListener(listener: StateRestoreListener): void {
    if (this.stateValue !== 'CREATED')
      throw new StreamsError(
        'Can only set GlobalStateRestoreListener before calling start(). Current state is: ' +
          this.stateValue,
      );
    this.restoreListener = listener;
  }

  private setState(next: KafkaStreamsState): void {
    const old = this.stateValue;
    if (old === next) return;
    this.stateValue = next;
    this.listener?.(next, old);
  }

  async start(): Promise<void> {
    if (this.stateValue !== 'CREATED')
      throw new StreamsError(`KafkaStreams is ${this.stateValue}, cannot start it`);
    this.setState('REBALANCING');
    // Kafka reads the process id from the state directory when the instance is made; without client.id it names
    // every client of the instance.
    this.config = withProcessId(this.config, this.processId);
    let layout: TopicLayout;
    for (const warning of this.config.clients.warnings) this.logger(warning);
    const admin = new Admin({
      ...this.config.clients.admin,
      bootstrapServers: this.config.bootstrapServers,
      clientId: `${this.config.clientId}-admin`,
    });
    try {
      layout = await ensureInternalTopics(
        admin,
        this.topology,
        this.config.applicationId,
        this.config.replicationFactor,
        this.config.windowStoreChangelogAdditionalRetentionMs,
        this.config.topicConfigs,
      );
    } catch (e) {
      await this.closeToError();
      throw e;
    } finally {
      await admin.close();
    }
    this.layout = layout;
    // With worker threads each worker loads and follows a copy of the global stores of its own (stream-worker.ts).
    if (this.topology.globalTopics().length > 0 && this.config.topologyModule === null) {
      const global = new GlobalStreamThread(
        this.config,
        this.topology,
        (t) => layout.partitions.get(t) ?? 0,
        {
          log: (m) => this.logger(m),
          restoreListener: this.restoreListener,
          onError: (e) => {
            // Kafka shuts the client down when the global thread dies: every task may read its stores.
            this.logger(`global thread failed: ${e.message}`);
            void this.closeToError();
          },
        },
      );
      this.globalThread = global;
      try {
        await global.start();
      } catch (e) {
        await this.closeToError();
        throw e;
      }
    }
    if (this.config.topologyModule === null)
      this.standbys = new StandbyUpdater(this.config, this.topology, (m) => this.logger(m));
    for (let i = 1; i <= this.config.numStreamThreads; i++)
      this.threads.push(this.newThread(layout, i, false));
    const workers = this.threads.filter((t) => t instanceof WorkerStreamThread);
    try {
      // Each worker has built its topology (the module imported, the description compared) before any joins.
      await Promise.all(workers.map((w) => w.ready));
    } catch (e) {
      await this.closeToError();
      throw e;
    }
    for (const t of this.threads) t.start();
  }

  /** `slot`: the thread's place among num.stream.threads (1..n), kept by a replacement. */
  private newThread(layout: TopicLayout, slot: number, replacement = true): LocalThread {
    if (this.config.topologyModule !== null) {
      const worker: WorkerStreamThread = new WorkerStreamThread(
        ++this.threadIndex,
        this.config,
        this.props,
        layout,
        this.processId,
        slot,
        topologyFingerprint(this.topology),
        {
          onStateChange: (_t, s) => this.onThreadState(s),
          onError: (t, e) => this.onThreadError(t, e),
          log: (m) => this.logger(m),
          onShutdownRequested: (t) => this.onShutdownRequested(t),
          onAssignmentInfo: (_t, info, generationId) => {
            if (this.hosts === null || generationId >= this.hosts.generationId)
              this.hosts = { generationId, info };
          },
          onReleaseStandbys: async (t, taskIds) => {
            const others = this.threads.filter(
              (o): o is WorkerStreamThread => o instanceof WorkerStreamThread && o !== t,
            );
            await Promise.all(others.map((o) => o.releaseStandbys(taskIds)));
          },
        },
      );
      // A replacement's failure to build its topology is a thread error like any other.
      if (replacement) worker.ready.catch((e: Error) => this.onThreadError(worker, e));
      return worker;
    }
    return new StreamThread(
      ++this.threadIndex,
      this.config,
      this.topology,
      layout,
      {
        onStateChange: (_t, s) => this.onThreadState(s),
        onError: (t, e) => this.onThreadError(t, e),
        log: (m) => this.logger(m),
        clientLogger: this.clientLogger,
        restoreListener: this.restoreListener,
        globalStore: (name) => this.globalThread?.store(name),
        standbys: this.standbys ?? undefined,
        onShutdownRequested: (t) => this.onShutdownRequested(t),
        onAssignmentInfo: (_t, info, generationId) => {
          if (this.hosts === null || generationId >= this.hosts.generationId)
            this.hosts = { generationId, info };
        },
      },
      this.processId,
    );
  }

  /** The process id (read from the state directory, or made and saved there, on first use). */
  get processId(): string {
    if (this.processIdValue === null)
      this.processIdValue = acquireProcessId(join(this.config.stateDir, this.config.applicationId), (m) =>
        this.logger(m),
      );
    return this.processIdValue;
  }

  private onThreadState(s: ThreadState): void {
    if (this.stateValue !== 'REBALANCING' && this.stateValue !== 'RUNNING') return;
    if (s === 'PARTITIONS_REVOKED' || s === 'PARTITIONS_ASSIGNED') this.setState('REBALANCING');
    else if (s === 'RUNNING' && this.threads.every((t) => t.state === 'RUNNING' || t.state === 'DEAD'))
      this.setState('RUNNING');
  }

  private onThreadError(thread: LocalThread, error: Error): void {
    this.logger(`${thread.name} failed: ${error.message}`);
    const response = this.exceptionHandler?.(error) ?? 'SHUTDOWN_CLIENT';
    if (this.stateValue === 'PENDING_SHUTDOWN' || this.stateValue === 'NOT_RUNNING') return;
    if (response === 'REPLACE_THREAD') {
      // The failed thread is closed without a commit (what it processed since its last commit is processed
      // again by its replacement, at least once), and a new thread joins the group in its place.
      void thread.close().then(() => {
        if (this.stateValue !== 'RUNNING' && this.stateValue !== 'REBALANCING') return;
        const replacement = this.newThread(this.layout!, this.threads.indexOf(thread) + 1);
        this.threads[this.threads.indexOf(thread)] = replacement;
        replacement.start();
      });
      return;
    }
    if (response === 'SHUTDOWN_APPLICATION') {
      // KIP-671: the request travels in a subscription. The failed thread is gone from the group, so a new
      // thread joins carrying it (Kafka adds one too when no live thread is left); the leader then answers
      // SHUTDOWN_REQUESTED to every member of every instance, this one included, and each shuts down.
      void thread.close().then(() => {
        if (this.stateValue !== 'RUNNING' && this.stateValue !== 'REBALANCING') return;
        const messenger = this.newThread(this.layout!, this.threads.indexOf(thread) + 1);
        messenger.sendShutdownRequest();
        this.threads[this.threads.indexOf(thread)] = messenger;
        messenger.start();
      });
      return;
    }
    // SHUTDOWN_CLIENT, Kafka's default response: the other threads stop too.
    void this.closeToError();
  }

  /**
   * The leader answered SHUTDOWN_REQUESTED: the application is shutting down, this instance with it; it ends in
   * ERROR, as Kafka's clients do. Called from inside a thread's poll, so the threads are closed after it returns.
   */
  private onShutdownRequested(thread: LocalThread): void {
    if (this.stateValue !== 'RUNNING' && this.stateValue !== 'REBALANCING') return;
    this.logger(`${thread.name}: the application is asked to shut down`);
    this.setState('PENDING_ERROR');
    setImmediate(() => void this.closeToError());
  }

  /**
   * Kafka's closeToError: the client stops for good in ERROR with everything closed (stream threads, standbys,
   * the global thread) and its process id released, as Kafka's shutdown releases the state directory, so that a
   * later instance of this process takes the directory's id back instead of a fresh one.
   */
  private async closeToError(): Promise<void> {
    // Closing or closed already (Kafka's setState refuses PENDING_ERROR from there).
    if (
      this.stateValue === 'PENDING_SHUTDOWN' ||
      this.stateValue === 'NOT_RUNNING' ||
      this.stateValue === 'ERROR'
    )
      return;
    this.setState('PENDING_ERROR');
    await Promise.allSettled(this.threads.map((t) => t.close()));
    await this.standbys?.close().catch(() => {});
    await this.globalThread?.close().catch(() => {});
    if (this.processIdValue !== null) releaseProcessId(this.processIdValue);
    this.setState('ERROR');
  }

  /**
   * Commits and closes every task (checkpoints written). The threads' members stay in the group (Kafka Streams'
   * internal.leave.group.on.close=false) unless `options` is CloseOptions with leaveGroup(true) or the
   * properties set consumer.internal.leave.group.on.close true. With a timeout (a number, Kafka's
   * close(Duration), or CloseOptions.timeout): true once everything is closed, false when that took longer (the
   * close goes on; a later call waits for the same one). Without one, waits as long as the close takes.
   */
  async close(options?: number | CloseOptions): Promise<boolean> {
    const timeoutMs = options instanceof CloseOptions ? options.timeoutMs : options;
    const leaveGroup = options instanceof CloseOptions && options.leaveGroupValue;
    if (timeoutMs !== undefined && !(timeoutMs >= 0)) throw new RangeError("Timeout can't be negative.");
    if (this.closing === null) {
      if (this.stateValue === 'NOT_RUNNING' || this.stateValue === 'ERROR') return true;
      this.closing = this.closeAll(leaveGroup);
    }
    if (timeoutMs === undefined) {
      await this.closing;
      return true;
    }
    let timer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([
      this.closing.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    return inTime;
  }

  private async closeAll(leaveGroup: boolean): Promise<void> {
    const erred = this.stateValue === 'PENDING_ERROR';
    this.setState('PENDING_SHUTDOWN');
    await Promise.allSettled(this.threads.map((t) => t.close(leaveGroup)));
    await this.standbys?.close().catch(() => {});
    await this.globalThread?.close().catch(() => {});
    if (this.processIdValue !== null) releaseProcessId(this.processIdValue);
    this.setState(erred ? 'ERROR' : 'NOT_RUNNING');
  }

  /**
   * Each local thread and the tasks it runs (Kafka's metadataForLocalThreads, in part), and (Brook's) the
   * node:worker_threads threadId it runs on: its worker's, or this thread's when threads share the event loop.
   */
  metadataForLocalThreads(): {
    threadName: string;
    threadState: string;
    activeTasks: string[];
    standbyTasks: string[];
    workerThreadId: number;
  }[] {
    return this.threads.map((t) => ({
      threadName: t.name,
      threadState: t.state,
      activeTasks: t.activeTaskIds(),
      standbyTasks: t.standbyTaskIds(),
      workerThreadId: t instanceof WorkerStreamThread ? t.threadId : threadId,
    }));
  }

  /**
   * A read-only view of a state store over the tasks of this instance that hold it (Kafka's interactive
   * queries). Each call on the view reads the instances current at that moment, so it survives rebalances;
   * it throws InvalidStateStoreException while the store is not queryable here.
   */
  store<T extends object>(params: StoreQueryParameters<T>): T {
    const name = params.storeName;
    if (!this.topology.stores.has(name))
      throw new InvalidStateStoreException(
        `Cannot get state store ${name} because no such store is registered in the topology.`,
      );
    const resolve = (): T => {
      const state = this.stateValue;
      if (state !== 'RUNNING' && !(params.staleStoresEnabled && state === 'REBALANCING'))
        throw new InvalidStateStoreException(
          `Cannot get state store ${name} because the stream thread is ${state}, not RUNNING`,
        );
      if (this.config.topologyModule !== null) return this.workerStore(params);
      const global = this.globalThread?.store(name);
      // Stale stores (Kafka's enableStaleStores): also the restoring active instances and the standbys.
      const stale = params.staleStoresEnabled;
      const found =
        global !== undefined
          ? [global]
          : [
              ...this.threads.flatMap((t) => (t instanceof StreamThread ? t.storesNamed(name, stale) : [])),
              ...(stale ? (this.standbys?.storesNamed(name) ?? []) : []),
            ]
              .filter((e) => params.partition === null || e.partition === params.partition)
              .map((e) => e.store);
      if (found.length === 0)
        throw new InvalidStateStoreException(
          `The state store, ${name}, may have migrated to another instance.`,
        );
      const type = params.queryableStoreType;
      if (!found.every((s) => type.accepts(s)))
        throw new InvalidStateStoreException(
          `Cannot get state store ${name} because the queryable store type [${type.kind}] does not accept the actual store type.`,
        );
      return type.create(found);
    };
    resolve(); // fail now, as Kafka does, when the store is not queryable at all
    return new Proxy({} as T, {
      get: (_target, prop) => {
        const view = resolve() as Record<string | symbol, unknown>;
        const member = view[prop];
        return typeof member === 'function' ? (member as (...a: unknown[]) => unknown).bind(view) : member;
      },
    });
  }

  /** store() over worker threads: each read asks the workers holding an instance (runtime/worker-thread.ts). */
  private workerStore<T>(params: StoreQueryParameters<T>): T {
    const name = params.storeName;
    const kind = params.queryableStoreType.kind;
    const holding = this.threads
      .filter((t): t is WorkerStreamThread => t instanceof WorkerStreamThread)
      .map((thread) => ({ thread, ...thread.probeStore(name, kind, params.partition) }))
      .filter((h) => h.count > 0);
    if (holding.length === 0)
      throw new InvalidStateStoreException(
        `The state store, ${name}, may have migrated to another instance.`,
      );
    if (!holding.every((h) => h.accepted))
      throw new InvalidStateStoreException(
        `Cannot get state store ${name} because the queryable store type [${kind}] does not accept the actual store type.`,
      );
    // Every worker holds a whole copy of a global store: one answers.
    const isGlobal = this.topology.subtopologies().some((st) => st.global && st.stores.includes(name));
    return workerStoreView(isGlobal ? holding.slice(0, 1) : holding, name, kind, params.partition) as T;
  }

  /** The stores of the sub-topologies that read these partitions. */
  private storesOf(tps: TopicPartition[]): string[] {
    const topics = new Set(tps.map((tp) => tp.topic));
    const out = new Set<string>();
    for (const st of this.topology.subtopologies())
      if (st.sourceTopics.some((t) => topics.has(this.realTopic(t)))) for (const s of st.stores) out.add(s);
    return [...out].sort();
  }

  private realTopic(topic: string): string {
    return this.topology.internalTopics.has(topic) ? `${this.config.applicationId}-${topic}` : topic;
  }

  /**
   * Every instance of the application with an application.server, as the newest assignment describes them
   * (Kafka's metadataForAllStreamsClients): its host, the partitions of its active and standby tasks and their
   * stores. Empty before the first assignment, or when no instance sets application.server.
   */
  metadataForAllStreamsClients(): StreamsMetadata[] {
    const info = this.hosts?.info;
    if (info === undefined) return [];
    const endpoints = [
      ...new Set([...Object.keys(info.partitionsByHost), ...Object.keys(info.standbyPartitionsByHost)]),
    ];
    return endpoints.sort().map((endpoint) => {
      const active = (info.partitionsByHost[endpoint] ?? []).map(([topic, partition]) => ({
        topic,
        partition,
      }));
      const standby = (info.standbyPartitionsByHost[endpoint] ?? []).map(([topic, partition]) => ({
        topic,
        partition,
      }));
      return {
        hostInfo: hostInfo(endpoint),
        stateStoreNames: this.storesOf(active),
        topicPartitions: active,
        standbyStateStoreNames: this.storesOf(standby),
        standbyTopicPartitions: standby,
      };
    });
  }

  /**
   * Where a key of a store lives (Kafka's queryMetadataForKey): its partition (murmur2 of the serialized key
   * over the store's sub-topology task count), the application.server of the instance running that task and
   * those of its standbys, from the newest assignment; `UNAVAILABLE_HOST` when no instance with an endpoint
   * runs it (Kafka's KeyQueryMetadata.NOT_AVAILABLE host).
   */
  queryMetadataForKey<K>(
    storeName: string,
    key: K,
    keySerializer: { serialize(topic: string, data: K): Buffer | null },
  ): KeyQueryMetadata {
    const st = this.topology.subtopologies().find((s) => s.stores.includes(storeName));
    const tasks = st === undefined ? undefined : this.layout?.tasksPerSubtopology.get(st.id);
    if (st === undefined || tasks === undefined)
      throw new InvalidStateStoreException(
        `Cannot get metadata for store ${storeName}: unknown or not started`,
      );
    const bytes = keySerializer.serialize(st.sourceTopics[0] ?? storeName, key);
    if (bytes === null) throw new StreamsError('a key may not serialize to null');
    const partition = keyPartition(bytes, tasks);
    const topics = new Set(st.sourceTopics.map((t) => this.realTopic(t)));
    const holds = (pairs: [string, number][] | undefined): boolean =>
      (pairs ?? []).some(([t, p]) => p === partition && topics.has(t));
    const info = this.hosts?.info;
    const active = Object.keys(info?.partitionsByHost ?? {}).find((h) => holds(info!.partitionsByHost[h]));
    const standbys = Object.keys(info?.standbyPartitionsByHost ?? {})
      .filter((h) => holds(info!.standbyPartitionsByHost[h]))
      .sort();
    return {
      activeHost: active === undefined ? UNAVAILABLE_HOST : hostInfo(active),
      standbyHosts: standbys.map(hostInfo),
      partition,
    };
  }

  /**
   * Ids of the standby tasks this instance keeps now (num.standby.replicas); with worker threads, those the
   * workers' newest assignments list.
   */
  standbyTaskIds(): string[] {
    if (this.standbys !== null) return this.standbys.taskIds();
    return [...new Set(this.threads.flatMap((t) => t.standbyTaskIds()))].sort();
  }

  /** Changelog records applied to this instance's standby stores since start. */
  standbyRecords(): number {
    if (this.standbys !== null) return this.standbys.applied;
    return this.threads.reduce((n, t) => n + (t instanceof WorkerStreamThread ? t.standbyRecords : 0), 0);
  }

  /**
   * Deletes this application's local state directory (`<state.dir>/<application.id>`), as Kafka's cleanUp: for a
   * reset, or to rebuild every store from its changelog. Only while not running.
   */
  cleanUp(): void {
    if (this.stateValue !== 'CREATED' && this.stateValue !== 'NOT_RUNNING' && this.stateValue !== 'ERROR')
      throw new StreamsError(`Cannot clean up while running (state ${this.stateValue}).`);
    rmSync(join(this.config.stateDir, this.config.applicationId), { recursive: true, force: true });
  }

  /** Records processed by all threads since start. */
  processedRecords(): number {
    return this.threads.reduce((n, t) => n + t.processed, 0);
  }

  /**
   * Records the threads' tasks dropped since start (Kafka's dropped-records-total of the tasks, summed): processing
   * errors answered CONTINUE by processing.exception.handler, records skipped by the deserialization exception
   * handler or for an invalid timestamp.
   */
  droppedRecords(): number {
    return this.threads.reduce((n, t) => n + t.droppedRecords, 0);
  }

  /** Changelog records applied while restoring stores, since start. */
  restoredRecords(): number {
    return this.threads.reduce((n, t) => n + t.restoredRecords, 0);
  }
}
