// The distributed herder (Kafka's DistributedHerder): workers sharing a group.id form a group, the leader
// assigns connectors and tasks (assignor.ts), configs live in the config topic (only the leader writes them;
// other workers forward REST changes to it), statuses in the status topic (each worker writes what it runs,
// every worker answers for all), source offsets in the offset topic.
//
// One loop (tick) owns what this worker runs: it keeps the group membership active (a rebalance runs inside it,
// stopping revoked work before the member rejoins), applies config changes read from the config topic (a new
// config restarts its connector, new task configs restart their tasks, target states pause, resume or stop),
// starts assigned work whose configs are known, hands task configs of the connectors it runs to the leader,
// and runs REST requests that touch what it runs (a restart). REST requests that change configs only write to
// the config topic, on the leader, and take effect through that loop on every worker.

import { Cluster, KafkaProtocolError, Producer } from '../../../client/index.js';
import { assert } from '../../../common/assert.js';
import type { Logger } from '../../../common/logger.js';
import type { ConfigValue } from '../../api/config-def.js';
import type { Connector, SourceConnector, TaskConfig } from '../../api/connector.js';
import { ConnectException, RebalanceNeededException, RequestTargetError, RestError } from '../../errors.js';
import { AbstractHerder, stateInfo } from '../abstract-herder.js';
import { type ClientKind, groupMemberClientOptions } from '../client-configs.js';
import { CONNECTOR_GRACEFUL_SHUTDOWN_TIMEOUT_MS, stopConnectorWithin } from '../connector-stop.js';
import { taskTransactionalId } from '../exactly-once-source-task.js';
import type {
  ConnectorInfo,
  ConnectorOffset,
  ConnectorStateInfo,
  ConnectorTaskId,
  Herder,
  RestartRequest,
  TaskInfo,
  TaskStateInfo,
} from '../herder.js';
import { CONNECT_LOGGERS } from '../loggers.js';
import { type RestAnswer, restRequest } from '../rest-client.js';
import { type Status, type TargetState, traceOf } from '../status.js';
import type { Worker } from '../worker.js';
import type { WorkerTask } from '../worker-task.js';
import {
  assignEager,
  assignIncremental,
  connectorKey,
  type LeaderMemory,
  type MemberInfo,
  taskKey,
  taskKeyPrefix,
} from './assignor.js';
import {
  type ConfigEvent,
  ConfigStore,
  leaderTransactionalId,
  PrivilegedWriteException,
} from './config-store.js';
import {
  CONFIG_MISMATCH,
  type ConnectAssignment,
  type ConnectProtocolMode,
  PROTOCOL_VERSIONS,
  type WorkUnits,
} from './connect-protocol.js';
import type { LogOpener } from './kafka-based-log.js';
import { generateSessionKey, type RequestSignature, signatureHeaders, verify } from './request-signature.js';
import { StatusStore } from './status-store.js';
import type { TopicOffsetStore } from './topic-offset-store.js';
import { WorkerGroupMember } from './worker-group-member.js';

/** The longest the loop sleeps when nothing wakes it. */
const TICK_MS = 1000;
/** How long stop() waits for the loop to finish its current step. */
const LOOP_STOP_WAIT_MS = 10_000;
const REBALANCE_MESSAGE =
  'Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.';
/** Kafka's answer (500) to a request whose config write was fenced: the leader claims its writer again. */
const FENCED_WRITE_MESSAGE =
  'Failed to write to config topic; this may be due to a transient error and the request can be safely retried';

interface RunningConnector {
  config: Record<string, string>;
  instance: Connector | null;
}

interface RunningTask {
  id: ConnectorTaskId;
  runner: WorkerTask;
  config: TaskConfig;
  /** The task config generation an exactly-once source task was started for (null for other tasks). */
  generation: number | null;
}

/** Fault-injection points for tests: each awaited where the herder would otherwise go on at once. */
export interface DistributedHerderFaults {
  /** Just before a task is built and started, with the task config generation it is started for. */
  beforeTaskStart?: (id: ConnectorTaskId, generation: number) => Promise<void>;
  /** Before the loop applies config records it has read (they stay pending meanwhile). */
  beforeConfigEvents?: () => Promise<void>;
}

export interface DistributedHerderOptions {
  worker: Worker;
  offsets: TopicOffsetStore;
  /** The logs of the internal topics (kafka-based-log.ts internalTopicLogs). */
  logs: { config: LogOpener; status: LogOpener };
  /** This worker's REST URL as other workers reach it, e.g. http://host:8083/ */
  url: string;
  faults?: DistributedHerderFaults;
}

export class DistributedHerder extends AbstractHerder implements Herder {
  private readonly configs: ConfigStore;
  private readonly statuses: StatusStore;
  private readonly offsets: TopicOffsetStore;
  /**
   * The group member and its connections, made when the herder starts: their client id names the worker by its
   * advertised REST address, known only once the REST server is bound.
   */
  private group: { cluster: Cluster; member: WorkerGroupMember } | null = null;
  private readonly maxDelayMs: number;
  /** Units (assignor keys) this worker was assigned and has not had revoked. */
  private readonly owned = new Set<string>();
  private readonly connectorsRunning = new Map<string, RunningConnector>();
  private readonly tasksRunning = new Map<string, RunningTask>();
  /** Tasks whose start failed (status FAILED): not started again until a restart or new configs. */
  private readonly startFailed = new Set<string>();
  /** Connectors whose task configs this worker must (re)generate and hand to the leader. */
  private readonly taskConfigsPending = new Set<string>();
  private readonly knownConnectors = new Set<string>();
  private readonly knownTaskCounts = new Map<string, number>();
  /** Zombie fencings in progress on this (leading) worker, per connector. */
  private readonly fencings = new Map<string, Promise<void>>();
  private events: ConfigEvent[] = [];
  /** Whether the config topic was read to its end at start (records read after that are news). */
  private configsRead = false;
  private requests: Array<() => Promise<void>> = [];
  private leader: { id: string; url: string } | null = null;
  private memory: { generation: number; memory: LeaderMemory } | null = null;
  private rejoinTimer: NodeJS.Timeout | null = null;
  private wakeUp: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  private stopping = false;
  private joinedOnce: Promise<void>;
  private resolveJoined: () => void = () => {};
  private rejectJoined: (err: Error) => void = () => {};
  private reportFailure: (err: Error) => void = () => {};
  /**
   * Settles with the error that ended the work loop for good (see fatalError), at start or later; never while the
   * herder runs. Kafka's herder exits the process then: the command running this herder does.
   */
  readonly failed: Promise<Error> = new Promise((resolve) => {
    this.reportFailure = resolve;
  });

  constructor(private readonly o: DistributedHerderOptions) {
    super(o.worker);
    const c = o.worker.o.config;
    const p = c.parsed;
    // KIP-618: with exactly-once source support preparing or enabled the leader writes configs through a fencable
    // transactional producer, so that a zombie leader cannot write once another worker leads.
    const fencing =
      p['exactly.once.source.support'] === 'disabled'
        ? null
        : {
            transactionalId: leaderTransactionalId(p['group.id'] as string),
            onFenced: (err: unknown) => this.onFencedFromConfigTopic(err),
          };
    this.configs = new ConfigStore(
      o.logs.config,
      (e) => {
        if (e.kind === 'logger-level') {
          // Applied as it is read, not in the loop, which may be waiting on a rebalance. As in Kafka, the levels
          // written before this worker started are not applied.
          if (this.configsRead) this.setWorkerLoggerLevel(e.namespace, e.level);
          return;
        }
        this.events.push(e);
        this.wake();
      },
      fencing,
    );
    this.statuses = new StatusStore(o.logs.status);
    this.offsets = o.offsets;
    this.maxDelayMs = p['scheduled.rebalance.max.delay.ms'] as number;
    this.joinedOnce = new Promise((resolve, reject) => {
      this.resolveJoined = resolve;
      this.rejectJoined = reject;
    });
  }

  private readonly log: Logger = this.worker.loggers.logger(CONNECT_LOGGERS.distributedHerder);

  /**
   * Kafka's DistributedHerder names the group member's client `client.id`, else `connect-<worker id>` (the
   * advertised REST host and port), so that each worker of a group shows under its own id in quotas and logs. Its
   * timeouts and backoffs are the worker's (WorkerGroupMember: request.timeout.ms, retry and reconnect backoffs...).
   */
  private openGroup(): { cluster: Cluster; member: WorkerGroupMember } {
    const p = this.worker.o.config.parsed;
    const clientId = (p['client.id'] as string) || `connect-${this.worker.workerId}`;
    const cluster = new Cluster({
      ...this.worker.internalClientOptions,
      ...groupMemberClientOptions(this.worker.o.config.raw),
      bootstrapServers: this.worker.o.config.bootstrapServers,
      clientId,
    });
    const member = new WorkerGroupMember({
      cluster,
      groupId: p['group.id'] as string,
      sessionTimeoutMs: p['session.timeout.ms'] as number,
      rebalanceTimeoutMs: p['rebalance.timeout.ms'] as number,
      heartbeatIntervalMs: p['heartbeat.interval.ms'] as number,
      mode: p['connect.protocol'] as ConnectProtocolMode,
      hooks: {
        state: () => ({ url: this.o.url, configOffset: this.configs.offset, owned: this.ownedUnits() }),
        beforeJoin: (eager) => this.beforeJoin(eager),
        assign: (protocol, leaderId, members) => this.assign(protocol, leaderId, members),
        onAssigned: (protocol, a) => this.onAssigned(protocol, a),
      },
    });
    return { cluster, member };
  }

  /** The group member; the herder's loop, which alone uses it, runs only once start() made it. */
  private get member(): WorkerGroupMember {
    assert(this.group !== null, 'the group member is made when the herder starts');
    return this.group.member;
  }

  /** Reads the internal topics, then joins the group; resolves after the first assignment. */
  async start(): Promise<void> {
    await this.offsets.start();
    await this.statuses.start();
    await this.configs.start();
    this.configsRead = true;
    // What the topic held at start is known, not news: no rebalance is asked for it.
    this.events = [];
    for (const name of this.configs.connectors.keys()) {
      this.knownConnectors.add(name);
      this.knownTaskCounts.set(name, this.configs.taskCount(name));
    }
    this.group = this.openGroup();
    this.loop = this.tickLoop();
    await this.joinedOnce;
  }

  private wake(): void {
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }

  private async tickLoop(): Promise<void> {
    while (!this.stopping) {
      try {
        await this.member.ensureActive();
        this.member.polled();
        if (this.stopping) break;
        await this.checkWritePrivileges();
        if (this.events.length > 0) await this.o.faults?.beforeConfigEvents?.();
        await this.handleEvents();
        await this.rotateSessionKey();
        await this.reconcile();
        await this.runRequests();
        // As Kafka's herder thread: startup is complete once a whole tick has run (topics read, group joined).
        if (!this.isReady()) this.markReady();
      } catch (err) {
        const fatal = this.fatalError(err);
        if (fatal !== null) {
          // As Kafka's herder thread on an exception it cannot retry: it logs it and ends; start() fails with it.
          this.log.error(`Uncaught exception in herder work thread, exiting: ${fatal.message}`);
          this.rejectJoined(fatal);
          this.reportFailure(fatal);
          return;
        }
        this.log.error(`Distributed herder tick failed, retrying: ${traceOf(err)}`);
        await new Promise((r) => setTimeout(r, TICK_MS));
      }
      if (this.stopping || this.member.rejoinNeeded() || this.events.length > 0 || this.requests.length > 0)
        continue;
      await new Promise<void>((r) => {
        const t = setTimeout(r, TICK_MS);
        this.wakeUp = () => {
          clearTimeout(t);
          r();
        };
      });
    }
  }

  /**
   * An error no retry can cure, or null: the group refused to this worker's principal (Kafka's
   * GroupAuthorizationException, fatal to its herder), which would otherwise have the worker retry forever.
   */
  private fatalError(err: unknown): ConnectException | null {
    if (!(err instanceof KafkaProtocolError) || err.type !== 'GROUP_AUTHORIZATION_FAILED') return null;
    const groupId = this.worker.o.config.parsed['group.id'] as string;
    return new ConnectException(`Not authorized to access group: ${groupId}`);
  }

  private generation(): number {
    // Before the group is joined, Kafka's member reports no generation (-1).
    return this.group?.member.generation().generationId ?? -1;
  }

  /** The leader's REST URL as the last assignment gave it (null before the first one). */
  leaderUrl(): string | null {
    return this.leader?.url ?? null;
  }

  private isLeader(): boolean {
    return this.leader !== null && this.leader.id === this.member.generation().memberId;
  }

  /**
   * KIP-618: the leader holds the config topic's fencable writer, claimed when it became leader (onAssigned) or
   * again here after a failed claim or a fenced write; a worker that no longer leads lets it go.
   */
  private async checkWritePrivileges(): Promise<void> {
    if (!this.configs.usesFencableWriter()) return;
    if (!this.isLeader()) {
      if (this.configs.hasWritePrivileges()) await this.configs.relinquishWritePrivileges();
      return;
    }
    if (this.configs.hasWritePrivileges()) return;
    this.log.info('Claiming write privileges for the config topic');
    await this.configs.claimWritePrivileges();
  }

  /** A privileged write failed (PRODUCER_FENCED: another worker claimed the writer): find out who leads now. */
  private onFencedFromConfigTopic(err: unknown): void {
    this.log.warn(
      `Failed to write to the config topic as leader (${(err as Error).message}); rejoining the group to learn whether this worker still leads`,
    );
    this.member.requestRejoin();
    this.wake();
  }

  /** What this worker was assigned and still holds, running or waiting for its configs. */
  private ownedUnits(): WorkUnits {
    const out: WorkUnits = { connectors: [], tasks: [] };
    for (const key of this.owned) {
      const [kind, name, task] = key.split('\u0000') as [string, string, string | undefined];
      if (kind === 'c') out.connectors.push(name);
      else out.tasks.push({ connector: name, task: Number(task) });
    }
    return out;
  }

  // ---- the group protocol ------------------------------------------------------------------------------------

  private async beforeJoin(eager: boolean): Promise<void> {
    if (!eager) return;
    for (const name of [...this.connectorsRunning.keys()]) await this.haltConnector(name, 'UNASSIGNED');
    for (const key of [...this.tasksRunning.keys()]) await this.haltTask(key);
    this.owned.clear();
  }

  private async assign(
    protocolName: string,
    leaderId: string,
    members: { memberId: string; state: { url: string; configOffset: number; assignment: WorkUnits } }[],
  ): Promise<Map<string, ConnectAssignment>> {
    await this.configs.readToEnd();
    const work = { connectors: new Map<string, number>() };
    for (const name of this.configs.connectors.keys())
      work.connectors.set(name, this.configs.taskCount(name));
    const infos: MemberInfo[] = members.map((m) => ({
      memberId: m.memberId,
      url: m.state.url,
      configOffset: m.state.configOffset,
      owned: m.state.assignment,
    }));
    const behind = infos.find((m) => m.configOffset > this.configs.offset);
    const version = PROTOCOL_VERSIONS[protocolName] ?? 0;
    if (behind !== undefined) {
      // The leader could not read as far as a member has: every member reads to the end and rejoins.
      this.log.info(
        `Leader's config offset ${this.configs.offset} is behind ${behind.url}'s ${behind.configOffset}`,
      );
      return new Map(
        infos.map((m) => [
          m.memberId,
          {
            version,
            error: CONFIG_MISMATCH,
            leader: leaderId,
            leaderUrl: this.o.url,
            configOffset: this.configs.offset,
            connectors: [],
            tasks: [],
            revoked: { connectors: [], tasks: [] },
            delayMs: 0,
          },
        ]),
      );
    }
    if (version === 0) {
      this.memory = null;
      return assignEager(leaderId, this.o.url, this.configs.offset, infos, work);
    }
    const generation = this.generation();
    const memory =
      this.memory !== null && this.memory.generation === generation - 1 ? this.memory.memory : null;
    const result = assignIncremental(
      leaderId,
      this.o.url,
      this.configs.offset,
      version,
      infos,
      work,
      memory,
      this.maxDelayMs,
      Date.now(),
    );
    this.memory = { generation, memory: result.memory };
    for (const [id, a] of result.assignments) {
      const url = infos.find((m) => m.memberId === id)?.url ?? id;
      this.log.info(
        `Generation ${generation} assignment for ${url}: assigned ${describe(a)}, revoked ${describe(a.revoked)}` +
          (a.delayMs > 0 ? `, scheduled rebalance in ${a.delayMs} ms` : ''),
      );
    }
    return result.assignments;
  }

  private async onAssigned(protocolName: string, a: ConnectAssignment): Promise<void> {
    this.leader = { id: a.leader, url: a.leaderUrl };
    if (a.error === CONFIG_MISMATCH) {
      await this.configs.readToEnd();
      this.member.requestRejoin();
      return;
    }
    for (const name of a.revoked.connectors) {
      this.owned.delete(connectorKey(name));
      await this.haltConnector(name, 'UNASSIGNED');
    }
    for (const id of a.revoked.tasks) {
      this.owned.delete(taskKey(id));
      await this.haltTask(taskKey(id));
    }
    // KIP-415: a worker that gave work up rejoins at once, so that the leader can hand it out.
    if (a.revoked.connectors.length > 0 || a.revoked.tasks.length > 0) this.member.requestRejoin();
    for (const name of a.connectors) this.owned.add(connectorKey(name));
    for (const id of a.tasks) this.owned.add(taskKey(id));
    if (a.configOffset > this.configs.offset) await this.configs.readToEnd();
    if (this.rejoinTimer !== null) clearTimeout(this.rejoinTimer);
    this.rejoinTimer = null;
    if (a.delayMs > 0) {
      this.rejoinTimer = setTimeout(() => {
        this.rejoinTimer = null;
        this.member.requestRejoin();
        this.wake();
      }, a.delayMs);
    }
    // A new leader claims the config topic's writer before anything else it writes (a claim that fails is
    // retried by the loop; until then its writes are refused).
    await this.checkWritePrivileges().catch((err) =>
      this.log.warn(`Could not claim write privileges for the config topic yet: ${(err as Error).message}`),
    );
    this.log.info(
      `Joined generation ${this.generation()} (${protocolName}) as ${this.isLeader() ? 'leader' : 'member'}: ` +
        `assigned ${describe(a)}, revoked ${describe(a.revoked)}, leader ${a.leaderUrl}`,
    );
    this.resolveJoined();
  }

  // ---- config changes ------------------------------------------------------------------------------------------

  private async handleEvents(): Promise<void> {
    for (const e of this.events.splice(0)) {
      if (e.kind === 'connector') await this.onConnectorConfig(e.name, e.removed);
      else if (e.kind === 'tasks') await this.onTaskConfigs(e.name);
      else if (e.kind === 'target-state') await this.onTargetState(e.name);
      else if (e.kind === 'restart') await this.onRestartRequest(e.name, e.request);
    }
  }

  private async onConnectorConfig(name: string, removed: boolean): Promise<void> {
    if (removed) {
      this.knownConnectors.delete(name);
      this.knownTaskCounts.delete(name);
      const tasks = [...this.tasksRunning.values()]
        .filter((t) => t.id.connector === name)
        .map((t) => t.id.task);
      const ran = this.connectorsRunning.has(name);
      for (const t of tasks) await this.haltTask(taskKey({ connector: name, task: t }));
      if (ran) await this.haltConnector(name, null);
      if (ran || tasks.length > 0)
        this.statuses.remove(name, tasks, this.generation()).catch((err) => this.logFailure(err));
      if (this.isLeader()) {
        await this.statuses.resetTopics(name).catch((err) => this.logFailure(err));
        this.member.requestRejoin();
      }
      return;
    }
    if (!this.knownConnectors.has(name)) {
      this.knownConnectors.add(name);
      if (this.isLeader()) this.member.requestRejoin();
    }
    const running = this.connectorsRunning.get(name);
    const config = this.configs.connectors.get(name);
    if (running !== undefined && config !== undefined && !sameConfig(running.config, config)) {
      this.log.info(`Connector ${name} has a new config: restarting it`);
      await this.haltConnector(name, null);
      await this.launchConnector(name);
    }
  }

  private async onTaskConfigs(name: string): Promise<void> {
    const count = this.configs.taskCount(name);
    if (this.knownTaskCounts.get(name) !== count) {
      this.knownTaskCounts.set(name, count);
      if (this.isLeader()) this.member.requestRejoin();
    }
    const configs = this.configs.taskConfigs.get(name) ?? [];
    this.forgetFailedStarts(name);
    for (const [key, t] of [...this.tasksRunning]) {
      if (t.id.connector !== name) continue;
      const next = configs[t.id.task];
      // A task whose config changed is stopped here and started again with the new one by reconcile(). So is an
      // exactly-once source task of an older generation: the new generation's fencing would fence it anyway (and
      // one that failed its generation check must start again).
      const stale = t.generation !== null && t.generation !== this.configs.taskGeneration(name);
      if (next === undefined || stale || !sameConfig(next, t.config)) await this.haltTask(key);
    }
  }

  private async onTargetState(name: string): Promise<void> {
    const state = this.configs.targetState(name);
    const running = this.connectorsRunning.get(name);
    if (running !== undefined) {
      if (state === 'STOPPED' || state === 'PAUSED') {
        // As Kafka's WorkerConnector.suspend: the connector instance stops, whatever the state it leaves (a
        // STOPPED connector paused reports PAUSED too); a failed one stays FAILED unless it is stopped.
        if (running.instance !== null) {
          await this.haltConnector(name, null);
          this.connectorsRunning.set(name, { config: running.config, instance: null });
        }
        if (state === 'STOPPED' || this.statuses.connector(name)?.state !== 'FAILED')
          await this.putConnectorStatus(name, state, null);
      } else if (running.instance === null) {
        // Resumed from STOPPED or PAUSED (or a failed start retried by a resume): start again.
        await this.haltConnector(name, null);
        await this.launchConnector(name);
      } else {
        await this.putConnectorStatus(name, 'RUNNING', null);
      }
    }
    for (const t of this.tasksRunning.values()) {
      if (t.id.connector !== name) continue;
      if (state === 'PAUSED') t.runner.pause();
      else if (state === 'STARTED') t.runner.resume();
    }
  }

  private async onRestartRequest(name: string, request: RestartRequest): Promise<void> {
    const running = this.connectorsRunning.get(name);
    if (running !== undefined) {
      const failed = this.statuses.connector(name)?.state === 'FAILED';
      if (!request.onlyFailed || failed) {
        await this.haltConnector(name, null);
        await this.launchConnector(name);
      }
    }
    if (!request.includeTasks) return;
    this.forgetFailedStarts(name);
    for (const [key, t] of [...this.tasksRunning]) {
      if (t.id.connector !== name) continue;
      if (request.onlyFailed && t.runner.status().state !== 'FAILED') continue;
      await this.haltTask(key);
    }
  }

  // ---- running work ---------------------------------------------------------------------------------------------

  /** Starts assigned work that is not running yet and whose configs are known; hands task configs over. */
  private async reconcile(): Promise<void> {
    for (const key of this.owned) {
      const [kind, name, task] = key.split('\u0000') as [string, string, string | undefined];
      if (kind === 'c' && !this.connectorsRunning.has(name) && this.configs.connectors.has(name)) {
        await this.launchConnector(name);
      } else if (kind === 't' && !this.tasksRunning.has(key) && !this.startFailed.has(key)) {
        const config = this.configs.taskConfigs.get(name)?.[Number(task)];
        const connectorConfig = this.configs.connectors.get(name);
        if (
          config !== undefined &&
          connectorConfig !== undefined &&
          this.configs.targetState(name) !== 'STOPPED'
        )
          await this.launchTask({ connector: name, task: Number(task) }, config, connectorConfig);
      }
    }
    for (const name of [...this.taskConfigsPending]) await this.publishTaskConfigs(name);
  }

  private async launchConnector(name: string): Promise<void> {
    const config = this.configs.connectors.get(name);
    if (config === undefined) return;
    const entry: RunningConnector = { config, instance: null };
    this.connectorsRunning.set(name, entry);
    // As Kafka's WorkerConnector, only a STARTED connector is started: a PAUSED one generates no task configs
    // (DistributedHerder's reconfigureConnector skips it), the tasks it already has run paused.
    const target = this.configs.targetState(name);
    if (target === 'STOPPED' || target === 'PAUSED') {
      await this.putConnectorStatus(name, target, null);
      return;
    }
    try {
      entry.instance = await this.worker.startConnector(config, {
        requestTaskReconfiguration: () => {
          this.taskConfigsPending.add(name);
          this.wake();
        },
        raiseError: (err) => {
          this.putConnectorStatus(name, 'FAILED', traceOf(err)).catch(() => {});
        },
      });
    } catch (err) {
      this.log.error(`Connector ${name} failed to start: ${traceOf(err)}`);
      await this.putConnectorStatus(name, 'FAILED', traceOf(err));
      return;
    }
    await this.putConnectorStatus(name, 'RUNNING', null);
    this.taskConfigsPending.add(name);
  }

  /** Stops a connector instance; `status` is written afterwards unless null. */
  private async haltConnector(name: string, status: 'UNASSIGNED' | null): Promise<void> {
    const entry = this.connectorsRunning.get(name);
    this.connectorsRunning.delete(name);
    this.taskConfigsPending.delete(name);
    if (entry?.instance) await stopConnectorWithin(name, entry.instance, this.log);
    if (entry !== undefined && status !== null) await this.putConnectorStatus(name, status, null);
  }

  /**
   * Writes a connector status without waiting for it, as Kafka's herder: the store sends it again after a
   * retriable failure for as long as it stands, which must not hold the herder's loop while the topic is away.
   */
  private async putConnectorStatus(
    name: string,
    state: Status['state'],
    trace: string | null,
  ): Promise<void> {
    this.statuses
      .putConnector(name, { state, trace, workerId: this.workerId() }, this.generation())
      .catch((err) => this.logFailure(err));
  }

  private logFailure(err: unknown): void {
    this.log.error(`Writing to an internal topic failed: ${traceOf(err)}`);
  }

  /** Generates the task configs of a connector this worker runs and hands them to the leader if they changed. */
  private async publishTaskConfigs(name: string): Promise<void> {
    const entry = this.connectorsRunning.get(name);
    if (entry?.instance == null || this.configs.targetState(name) !== 'STARTED') {
      this.taskConfigsPending.delete(name);
      return;
    }
    let configs: TaskConfig[];
    try {
      configs = await this.generateTaskConfigs(entry.instance, entry.config);
    } catch (err) {
      this.taskConfigsPending.delete(name);
      await this.putConnectorStatus(name, 'FAILED', traceOf(err));
      return;
    }
    const current = this.configs.taskConfigs.get(name);
    if (current !== undefined && JSON.stringify(current) === JSON.stringify(configs)) {
      this.taskConfigsPending.delete(name);
      return;
    }
    try {
      if (this.isLeader()) await this.configs.putTaskConfigs(name, configs);
      else await this.sendTaskConfigsToLeader(name, configs);
      this.taskConfigsPending.delete(name);
    } catch (err) {
      // Kept pending: the next tick tries again (after a rebalance the leader may be another worker).
      this.log.warn(`Could not hand task configs of ${name} to the leader yet: ${(err as Error).message}`);
    }
  }

  // ---- signed internal requests (request-signature.ts) ---------------------------------------------------------

  /** Internal requests are signed once the group speaks `sessioned` (protocol version 2), as in Kafka. */
  private signingEnabled(): boolean {
    return this.group?.member.currentProtocol() === 'sessioned';
  }

  /** The leader writes a new session key when there is none or the current one is older than its TTL. */
  private async rotateSessionKey(): Promise<void> {
    if (!this.isLeader() || !this.signingEnabled()) return;
    const p = this.worker.o.config.parsed;
    const current = this.configs.sessionKey;
    const now = Date.now();
    if (current !== null && current.creationTimestamp + (p['inter.worker.key.ttl.ms'] as number) > now)
      return;
    const key = generateSessionKey(
      p['inter.worker.key.generation.algorithm'] as string,
      p['inter.worker.key.size'] as number | null,
      now,
    );
    this.log.info(
      current === null ? 'Writing the first session key' : 'Session key expired: writing a new one',
    );
    await this.configs.putSessionKey(key);
  }

  /** Workers of a cluster listen alike: this worker's scheme is every worker's. */
  private restScheme(): 'http' | 'https' {
    return this.worker.o.config.restTls === null ? 'http' : 'https';
  }

  /** A request to another worker's REST API (its https listener trusted through this worker's trust store). */
  private internalRequest(
    url: URL,
    method: string,
    headers: Record<string, string | number>,
    body: Buffer | null,
  ): Promise<RestAnswer> {
    return restRequest(url, method, headers, body, this.worker.o.config.restTls?.client ?? null, 60_000);
  }

  /** Signature headers for an internal request's body (none before a session key is known, or when not sessioned). */
  private signed(body: Buffer): Record<string, string> {
    const key = this.configs.sessionKey;
    if (!this.signingEnabled() || key === null) return {};
    return signatureHeaders(
      key,
      this.worker.o.config.parsed['inter.worker.signature.algorithm'] as string,
      body,
    );
  }

  /** Kafka's checks of an internal request: 400 without a signature or with an unknown algorithm, 403 if wrong. */
  private checkSignature(signature: RequestSignature | undefined): void {
    if (!this.signingEnabled()) return;
    verify(
      signature ?? { signature: undefined, algorithm: undefined, body: Buffer.alloc(0) },
      this.configs.sessionKey,
      this.worker.o.config.parsed['inter.worker.verification.algorithms'] as string[],
    );
  }

  /** Fencing done here if this worker leads, else by the leader through its REST API. */
  private async requestFencing(name: string): Promise<void> {
    if (this.isLeader()) return this.fenceAsLeader(name);
    if (this.leader === null) throw new ConnectException('no leader known');
    const url = new URL(`connectors/${encodeURIComponent(name)}/fence`, this.leader.url);
    const res = await this.internalRequest(url, 'PUT', this.signed(Buffer.alloc(0)), null);
    if (res.status !== 204)
      throw new ConnectException(`the leader answered ${res.status}: ${res.body.toString('utf8')}`);
  }

  /**
   * KIP-618 zombie fencing, on the leader: when a connector's task configs were committed after its last
   * `tasks-fencing-` record, the transactional ids of the previous generation's tasks are fenced (InitProducerId
   * bumps their epochs, so a zombie task still running somewhere can neither write nor commit), then the new task
   * count is recorded. As in Kafka, nothing is fenced for a connector's first generation, nor from one task to one
   * task (the new task's own initTransactions fences the old one, same id).
   */
  async fenceZombies(name: string, signature?: RequestSignature): Promise<void> {
    this.checkSignature(signature);
    return this.fenceAsLeader(name);
  }

  private async fenceAsLeader(name: string): Promise<void> {
    this.requireLeader();
    const config = this.config(name);
    if (this.typeOf(config) !== 'source')
      throw new RestError(400, `Connector ${name} is not a source connector`);
    let running = this.fencings.get(name);
    if (running === undefined) {
      running = this.fence(name).finally(() => this.fencings.delete(name));
      this.fencings.set(name, running);
    }
    await running;
  }

  private async fence(name: string): Promise<void> {
    await this.configs.readToEnd();
    if (!this.configs.pendingFencing.has(name)) return;
    const count = this.configs.taskCount(name);
    const previous = this.configs.taskCountRecords.get(name);
    if (previous !== undefined && !(previous === 1 && count === 1)) {
      const groupId = this.worker.o.config.parsed['group.id'] as string;
      const ids = [...Array(previous).keys()].map((t) => taskTransactionalId(groupId, name, t));
      this.log.info(`Fencing ${ids.length} transactional producers of ${name}: ${ids.join(', ')}`);
      await Promise.all(ids.map((id) => fenceProducer(this.worker, id)));
    }
    await this.writeAsLeader(() => this.configs.putTaskCountRecord(name, count));
  }

  private async sendTaskConfigsToLeader(name: string, configs: TaskConfig[]): Promise<void> {
    if (this.leader === null) throw new ConnectException('no leader known');
    // No forward flag, as Kafka's reconfigureConnector: a worker that no longer leads sends it on to the leader.
    const url = new URL(`connectors/${encodeURIComponent(name)}/tasks`, this.leader.url);
    const body = Buffer.from(JSON.stringify(configs), 'utf8');
    const res = await this.internalRequest(
      url,
      'POST',
      { 'content-type': 'application/json', 'content-length': body.length, ...this.signed(body) },
      body,
    );
    if (res.status !== 204)
      throw new ConnectException(`the leader answered ${res.status}: ${res.body.toString('utf8')}`);
  }

  private async launchTask(
    id: ConnectorTaskId,
    config: TaskConfig,
    connectorConfig: Record<string, string>,
  ): Promise<void> {
    const key = taskKey(id);
    const paused = this.configs.targetState(id.connector) === 'PAUSED';
    // The task config generation `config` belongs to: an exactly-once task checks it is still current (below).
    const taskGeneration = this.configs.taskGeneration(id.connector);
    try {
      const source = this.worker.connectorType(connectorConfig) === 'source';
      const exactlyOnce = source && this.worker.exactlyOnceSourceEnabled();
      // KIP-618: no task of a new generation starts before the older generations' producers are fenced.
      if (exactlyOnce && this.configs.pendingFencing.has(id.connector)) {
        try {
          await this.requestFencing(id.connector);
        } catch (err) {
          // Not started (nor failed): the next tick asks again, after a rebalance perhaps of another leader.
          this.log.error(
            `Zombie fencing for ${id.connector} failed, the task waits: ${(err as Error).message}`,
          );
          return;
        }
      }
      // A source task moved here from another worker resumes from the offsets that worker committed last.
      if (source) await this.offsets.refresh();
      await this.o.faults?.beforeTaskStart?.(id, taskGeneration);
      const check = () => this.verifyTaskGenerationAndOwnership(id, taskGeneration);
      const runner = await this.worker.startTask(
        id,
        { ...connectorConfig },
        config,
        paused,
        (tid, status) => {
          this.statuses
            .putTask(tid.connector, tid.task, status, this.generation())
            .catch((err) => this.logFailure(err));
        },
        (topic) => {
          // Called for every record a task sends: a topic already recorded costs a lookup, not two promises.
          if (this.statuses.hasTopic(id.connector, topic)) return;
          this.statuses.putTopic(id.connector, topic, id.task).catch((err) => this.logFailure(err));
        },
        exactlyOnce ? { preProducerCheck: check, postProducerCheck: check } : {},
      );
      this.tasksRunning.set(key, { id, runner, config, generation: exactlyOnce ? taskGeneration : null });
    } catch (err) {
      this.log.error(`Task ${id.connector}-${id.task} failed to start: ${traceOf(err)}`);
      this.startFailed.add(key);
      this.statuses
        .putTask(
          id.connector,
          id.task,
          { state: 'FAILED', workerId: this.workerId(), trace: traceOf(err) },
          this.generation(),
        )
        .catch((e) => this.logFailure(e));
    }
  }

  /**
   * KIP-618 (Kafka's verifyTaskGenerationAndOwnership): before and after an exactly-once source task initializes
   * its transactional producer, the config topic is read to its end and the task must still be assigned here and
   * its task config generation still the newest; otherwise the task fails before it starts, so a task of a stale
   * generation neither fences the current generation's producer nor writes. The new generation's event restarts
   * it (onTaskConfigs).
   */
  private async verifyTaskGenerationAndOwnership(id: ConnectorTaskId, generation: number): Promise<void> {
    await this.configs.readToEnd();
    let refusal: string | null = null;
    if (!this.owned.has(taskKey(id))) refusal = 'it is no longer assigned to this worker';
    else if (this.configs.taskGeneration(id.connector) !== generation)
      refusal = 'its task generation has changed since it was assigned to this worker';
    if (refusal === null) return;
    // Logged here too: a task being stopped meanwhile does not report its failure.
    const message = `Failed to start source task ${id.connector}-${id.task} as ${refusal}`;
    this.log.error(message);
    throw new ConnectException(message);
  }

  /** Stops a task (its runner writes UNASSIGNED); reconcile() starts it again if it is still assigned. */
  private async haltTask(key: string): Promise<void> {
    this.startFailed.delete(key);
    const t = this.tasksRunning.get(key);
    if (t === undefined) return;
    this.tasksRunning.delete(key);
    await t.runner.stop(this.worker.o.config.parsed['task.shutdown.graceful.timeout.ms'] as number);
  }

  /** A connector's tasks whose start failed may start again (new task configs, a restart). */
  private forgetFailedStarts(name: string): void {
    const prefix = taskKeyPrefix(name);
    for (const key of [...this.startFailed]) if (key.startsWith(prefix)) this.startFailed.delete(key);
  }

  /** KIP-1017: healthy once ready and the work loop runs a request (a loop stuck in a tick leaves it pending). */
  override async healthCheck(): Promise<void> {
    await super.healthCheck();
    await this.inLoop(async () => {});
  }

  private async runRequests(): Promise<void> {
    for (const r of this.requests.splice(0)) await r();
  }

  /** Runs `op` inside the loop (it touches what this worker runs) and resolves with it. */
  private inLoop(op: () => Promise<void>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.requests.push(() => op().then(resolve, reject));
      this.wake();
    });
  }

  // ---- the REST API -------------------------------------------------------------------------------------------

  /**
   * Kafka's needsReconfigRebalance: a new connector, a removed one or new task configs read from the config topic
   * and not yet applied by the loop (which asks for the rebalance when it applies them).
   */
  checkRebalanceNeeded(): void {
    const expected = this.events.some(
      (e) => e.kind === 'tasks' || (e.kind === 'connector' && e.removed === this.knownConnectors.has(e.name)),
    );
    if (expected) throw new RebalanceNeededException();
  }

  private requireLeader(): void {
    if (this.leader === null || this.generation() < 0) throw new RestError(409, REBALANCE_MESSAGE);
    if (!this.isLeader()) throw new RequestTargetError(this.leader.url, 'Only the leader can change configs');
    // A leader that lost (or has not yet claimed) the config topic's writer cannot write until it claims it again.
    if (!this.configs.hasWritePrivileges())
      throw new RestError(
        409,
        'Cannot complete request because of a conflicting operation (e.g. worker rebalance)',
      );
  }

  /**
   * A config write on behalf of a REST request (Kafka's writeToConfigTopicAsLeader): when the write is fenced
   * (another worker claimed the config topic's writer, so this one may no longer lead) the store has already
   * asked for a rejoin, and the client gets Kafka's 500 saying the request can be retried.
   */
  private async writeAsLeader(write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (err) {
      if (err instanceof PrivilegedWriteException) throw new RestError(500, FENCED_WRITE_MESSAGE);
      throw err;
    }
  }

  /** The connector's config; `notFound` is the 404's message, which Kafka words per operation. */
  private config(name: string, notFound = `Connector ${name} not found`): Record<string, string> {
    const c = this.configs.connectors.get(name);
    if (c === undefined) throw new RestError(404, notFound);
    return c;
  }

  private typeOf(config: Record<string, string>): 'source' | 'sink' | 'unknown' {
    try {
      return this.worker.connectorType(config);
    } catch {
      return 'unknown';
    }
  }

  connectors(): string[] {
    return [...this.configs.connectors.keys()].sort();
  }

  /**
   * As Kafka's DistributedHerder: a source connector with exactly-once support or its own offsets topic also has
   * an admin and a consumer (for that topic), whose overrides the policy then judges.
   */
  protected override clientsUsed(type: 'source' | 'sink', config: Record<string, string>): ClientKind[] {
    const used = super.clientsUsed(type, config);
    const ownOffsetsTopic = (config['offsets.storage.topic'] ?? '').trim() !== '';
    if (type !== 'source' || !(this.worker.exactlyOnceSourceEnabled() || ownOffsetsTopic)) return used;
    return [...new Set<ClientKind>([...used, 'admin', 'consumer'])];
  }

  /** KIP-618's checks of `exactly.once.support` and `transaction.boundary`, with Kafka's messages. */
  protected override async validateSourceConnector(
    connector: SourceConnector,
    config: Record<string, string>,
    values: ConfigValue[],
  ): Promise<void> {
    const eos = values.find((v) => v.name === 'exactly.once.support');
    if (eos !== undefined && eos.errors.length === 0 && String(eos.value).toLowerCase() === 'required') {
      if (!this.worker.exactlyOnceSourceEnabled())
        eos.errors.push('This worker does not have exactly-once source support enabled.');
      try {
        const support = await connector.exactlyOnceSupport({ ...config });
        if (support === undefined || support === null) {
          eos.errors.push(
            'The connector does not implement the API required for preflight validation of exactly-once source support. Please consult the documentation for the connector to determine whether it supports exactly-once semantics, and then consider reconfiguring the connector to use the value "requested" for this property (which will disable this preflight check and allow the connector to be created).',
          );
        } else if (support !== 'SUPPORTED') {
          eos.errors.push(
            'The connector does not support exactly-once semantics with the provided configuration.',
          );
        }
      } catch (err) {
        eos.errors.push(unexpectedValidationError(err));
      }
    }
    const boundary = values.find((v) => v.name === 'transaction.boundary');
    if (
      boundary !== undefined &&
      boundary.errors.length === 0 &&
      String(boundary.value).toLowerCase() === 'connector'
    ) {
      try {
        const can = await connector.canDefineTransactionBoundaries({ ...config });
        if (can === undefined || can === null) {
          boundary.errors.push(
            "This connector has returned a null value from its canDefineTransactionBoundaries method, which is not permitted. The connector will be treated as if it cannot define its own transaction boundaries, and cannot be configured with 'transaction.boundary' set to 'connector'.",
          );
        } else if (can !== 'SUPPORTED') {
          boundary.errors.push(
            'The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition.',
          );
        }
      } catch (err) {
        boundary.errors.push(unexpectedValidationError(err));
      }
    }
  }

  connectorInfo(name: string): ConnectorInfo {
    const config = this.config(name);
    return {
      name,
      config: { ...config },
      tasks: [...Array(this.configs.taskCount(name)).keys()].map((task) => ({ connector: name, task })),
      type: this.typeOf(config),
    };
  }

  connectorConfig(name: string): Record<string, string> {
    return { ...this.config(name) };
  }

  async putConnectorConfig(
    name: string,
    config: Record<string, string>,
    allowReplace: boolean,
    initialState: TargetState = 'STARTED',
  ): Promise<{ created: boolean; info: ConnectorInfo }> {
    this.requireLeader();
    const exists = this.configs.connectors.has(name);
    if (exists && !allowReplace) throw new RestError(409, `Connector ${name} already exists`);
    await this.checkValid(config);
    await this.writeAsLeader(() =>
      this.configs.putConnectorConfig(name, config, exists ? undefined : initialState),
    );
    return { created: !exists, info: this.connectorInfo(name) };
  }

  async deleteConnector(name: string): Promise<void> {
    this.requireLeader();
    this.config(name);
    await this.writeAsLeader(() => this.configs.removeConnector(name));
  }

  connectorStatus(name: string): ConnectorStateInfo {
    const config = this.config(name);
    const c = this.statuses.connector(name);
    if (c === undefined) throw new RestError(404, `No status found for connector ${name}`);
    const tasks: TaskStateInfo[] = [];
    for (let t = 0; t < this.configs.taskCount(name); t++) {
      const s = this.statuses.task(name, t);
      if (s !== undefined) tasks.push({ id: t, ...stateInfo(s) });
    }
    return { name, connector: stateInfo(c), tasks, type: this.typeOf(config) };
  }

  taskStatus(name: string, task: number): TaskStateInfo {
    this.config(name);
    const s = task < this.configs.taskCount(name) ? this.statuses.task(name, task) : undefined;
    if (s === undefined) throw new RestError(404, `No status found for task ${name}-${task}`);
    return { id: task, ...stateInfo(s) };
  }

  taskConfigs(name: string): TaskInfo[] {
    this.config(name);
    return (this.configs.taskConfigs.get(name) ?? []).map((config, task) => ({
      id: { connector: name, task },
      config: { ...config },
    }));
  }

  /** The topics every worker's tasks of the connector used (KIP-558), from the status topic. */
  connectorActiveTopics(name: string): string[] {
    this.config(name);
    return this.statuses.activeTopics(name);
  }

  resetConnectorActiveTopics(name: string): void {
    this.config(name);
    this.statuses.resetTopics(name).catch((err) => this.logFailure(err));
  }

  async restartConnector(name: string, request: RestartRequest): Promise<ConnectorStateInfo | null> {
    this.config(name);
    if (!request.includeTasks && !request.onlyFailed) {
      // The connector's owner restarts it (the status says who that is).
      const owner = this.statuses.connector(name)?.workerId;
      if (owner === undefined) throw new RestError(409, REBALANCE_MESSAGE);
      if (owner !== this.workerId() || !this.connectorsRunning.has(name))
        throw new RequestTargetError(
          `${this.restScheme()}://${owner}/`,
          `Connector ${name} runs on ${owner}`,
        );
      await this.inLoop(async () => {
        await this.haltConnector(name, null);
        await this.launchConnector(name);
      });
      return null;
    }
    this.requireLeader();
    const plan = this.connectorStatus(name);
    const restartConnector = !request.onlyFailed || plan.connector.state === 'FAILED';
    if (restartConnector) plan.connector = { state: 'RESTARTING', worker_id: plan.connector.worker_id };
    plan.tasks = plan.tasks.map((t) =>
      request.includeTasks && (!request.onlyFailed || t.state === 'FAILED')
        ? { id: t.id, state: 'RESTARTING', worker_id: t.worker_id }
        : t,
    );
    await this.writeAsLeader(() => this.configs.putRestartRequest(name, request));
    return plan;
  }

  async restartTask(name: string, task: number): Promise<void> {
    const status = this.taskStatus(name, task);
    const key = taskKey({ connector: name, task });
    if (status.worker_id !== this.workerId() || !this.owned.has(key))
      throw new RequestTargetError(
        `${this.restScheme()}://${status.worker_id}/`,
        `Task ${name}-${task} runs on ${status.worker_id}`,
      );
    // Stopped here; reconcile() in the same loop starts it again with its current config.
    await this.inLoop(() => this.haltTask(key));
  }

  /**
   * As Kafka's AbstractHerder.pauseConnector, on whichever worker got the request, leader or not and during a
   * rebalance too: a target state is an ordinary record of the config topic (not a leader's privileged write), and
   * every worker applies it as it reads it. Whatever the target state was: a STOPPED connector becomes PAUSED.
   */
  async pauseConnector(name: string): Promise<void> {
    this.config(name, `Unknown connector ${name}`);
    await this.configs.putTargetState(name, 'PAUSED');
  }

  /** As Kafka's AbstractHerder.resumeConnector: any worker writes the STARTED target state itself. */
  async resumeConnector(name: string): Promise<void> {
    this.config(name, `Unknown connector ${name}`);
    await this.configs.putTargetState(name, 'STARTED');
  }

  async stopConnector(name: string): Promise<void> {
    this.requireLeader();
    this.config(name);
    // As Kafka: no tasks first (the leader revokes them), then the STOPPED target state.
    await this.writeAsLeader(async () => {
      await this.configs.putTaskConfigs(name, []);
      await this.configs.putTargetState(name, 'STOPPED');
    });
  }

  async connectorOffsets(name: string): Promise<ConnectorOffset[]> {
    const config = this.config(name);
    if (this.typeOf(config) === 'sink') return this.sinkOffsets(name, config);
    const store = await this.worker.sourceOffsetStore(config);
    await store.refresh?.();
    return store.list(name);
  }

  async alterConnectorOffsets(name: string, offsets: ConnectorOffset[] | null): Promise<string> {
    let config = await this.modifyOffsetsChecks(name);
    if (this.typeOf(config) === 'sink') return this.alterSinkOffsets(name, config, offsets);
    // As Kafka's modifyConnectorOffsets: under exactly-once, the tasks of older generations are fenced first, so a
    // zombie task still running somewhere cannot commit offsets over the ones written here. The fencing may take a
    // while: the checks run again after it, on what the config topic says then.
    if (this.worker.exactlyOnceSourceEnabled()) {
      try {
        await this.fenceAsLeader(name);
      } catch (err) {
        const message = 'Failed to perform zombie fencing for source connector prior to modifying offsets';
        this.log.error(`${message} ${name}: ${String(err)}`);
        throw new ConnectException(message, { cause: err });
      }
      config = await this.modifyOffsetsChecks(name);
    }
    const store = await this.worker.sourceOffsetStore(config);
    await store.refresh?.();
    if (!this.worker.exactlyOnceSourceEnabled()) return this.alterSourceOffsets(name, config, store, offsets);
    const eosConfig = config;
    return this.alterSourceOffsets(name, config, store, offsets, (entries) =>
      this.worker.writeSourceOffsetsExactlyOnce(name, eosConfig, store, entries),
    );
  }

  /**
   * Kafka's modifyConnectorOffsetsChecks: the leader, having read the config topic to its end (a stop, resume or
   * reconfiguration another worker wrote counts), finds the connector STOPPED with no task configs left, so that
   * no task of it can still be running anywhere while its offsets change (a STOPPED state alone does not say its
   * tasks went). Returns the connector's config.
   */
  private async modifyOffsetsChecks(name: string): Promise<Record<string, string>> {
    this.requireLeader();
    try {
      await this.configs.readToEnd();
    } catch (err) {
      throw new ConnectException('Failed to read to end of config topic before modifying connector offsets', {
        cause: err,
      });
    }
    const config = this.config(name);
    if (this.configs.targetState(name) !== 'STOPPED' || this.configs.taskCount(name) !== 0) {
      throw new RestError(
        400,
        `Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/${name}/stop' endpoint`,
      );
    }
    return config;
  }

  /** KIP-976: every worker, this one included, applies the level when it reads the record. */
  async setClusterLoggerLevel(namespace: string, level: string): Promise<void> {
    await this.configs.putLoggerLevel(namespace, level);
  }

  async putTaskConfigs(name: string, configs: TaskConfig[], signature?: RequestSignature): Promise<void> {
    this.checkSignature(signature);
    this.requireLeader();
    this.config(name);
    await this.writeAsLeader(() => this.configs.putTaskConfigs(name, configs));
  }

  /**
   * Stops the work, leaves the group and closes the internal stores within Kafka's bound on a herder's stop
   * (DistributedHerder.herderExecutorTimeoutMs): worker.sync.timeout.ms + task.shutdown.graceful.timeout.ms + 5 s
   * for the connectors + 10 s. Kafka then interrupts the herder thread, which ends a producer's close at once (its
   * records still retried fail): here the stores' clients close with what is left of the bound, so a stalled
   * offsets topic does not hold the stop for each client's own close timeout.
   */
  async stop(): Promise<void> {
    const p = this.worker.o.config.parsed;
    const stopLimitMs =
      (p['worker.sync.timeout.ms'] as number) +
      (p['task.shutdown.graceful.timeout.ms'] as number) +
      CONNECTOR_GRACEFUL_SHUTDOWN_TIMEOUT_MS +
      10_000;
    const stopDeadline = Date.now() + stopLimitMs;
    const leftMs = () => Math.max(0, stopDeadline - Date.now());
    this.stopping = true;
    if (this.rejoinTimer !== null) clearTimeout(this.rejoinTimer);
    this.wake();
    // The loop may wait in a JoinGroup for members that are gone (up to rebalance.timeout.ms): not that long.
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      (this.loop ?? Promise.resolve()).then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(false), LOOP_STOP_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    await Promise.all([...this.tasksRunning.keys()].map((key) => this.haltTask(key)));
    for (const name of [...this.connectorsRunning.keys()]) await this.haltConnector(name, 'UNASSIGNED');
    this.owned.clear();
    // Leaving waits for a join in flight; without one the group hands the work out at once. A worker stuck in a
    // join just closes its connections and the coordinator drops it after session.timeout.ms.
    if (ended) await this.group?.member.leave().catch(() => {});
    await this.group?.cluster.close().catch(() => {});
    await this.configs.stop(leftMs());
    await this.statuses.stop(leftMs());
    await this.offsets.stop(leftMs());
  }
}

/**
 * Fences a transactional id as Kafka's Admin.fenceProducers does: InitProducerId for it bumps its epoch and
 * aborts its open transaction, so its current holder fails with PRODUCER_FENCED on its next request.
 */
async function fenceProducer(worker: Worker, transactionalId: string): Promise<void> {
  const p = new Producer({
    ...worker.internalClientOptions,
    bootstrapServers: worker.o.config.bootstrapServers,
    transactionalId,
    clientId: `fencer-${transactionalId}`,
  });
  try {
    await p.initTransactions();
  } finally {
    await p.close().catch(() => {});
  }
}

function unexpectedValidationError(err: unknown): string {
  const message = err instanceof Error ? err.message.trim() : '';
  return message === ''
    ? 'An unexpected error occurred during validation; please see the worker logs for more details.'
    : `An unexpected error occurred during validation: ${message}`;
}

function sameConfig(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => a[k] === b[k]);
}

function describe(u: WorkUnits): string {
  const parts = [...u.connectors, ...u.tasks.map((t) => `${t.connector}-${t.task}`)];
  return parts.length === 0 ? 'nothing' : parts.join(', ');
}
