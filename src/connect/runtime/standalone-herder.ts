// The standalone herder: one worker runs every connector and task; connector configs live in memory (given on
// the command line or through the REST API, as in Kafka's standalone mode) and source offsets in
// offset.storage.file.filename. Every change of state happens between awaits in one place per operation
// (create, update, pause, resume, stop, restart, delete), and operations on one connector are serialized by
// a per-connector queue so that a restart and a delete cannot interleave.

import type { Logger } from '../../common/logger.js';
import type { Connector, TaskConfig } from '../api/connector.js';
import { ConnectException, RestError } from '../errors.js';
import { BROOK_CONNECT_VERSION } from '../version.js';
import { AbstractHerder, stateInfo } from './abstract-herder.js';
import { stopConnectorWithin } from './connector-stop.js';
import type {
  ConnectorInfo,
  ConnectorOffset,
  ConnectorStateInfo,
  Herder,
  RestartRequest,
  TaskInfo,
  TaskStateInfo,
} from './herder.js';
import { CONNECT_LOGGERS } from './loggers.js';
import { type Status, type TargetState, traceOf } from './status.js';
import type { TaskId, WorkerTask } from './worker-task.js';

interface Entry {
  name: string;
  config: Record<string, string>;
  type: 'source' | 'sink';
  target: TargetState;
  instance: Connector | null;
  status: Status;
  taskConfigs: TaskConfig[];
  tasks: Map<number, WorkerTask>;
  taskStatus: Map<number, Status>;
  activeTopics: Set<string>;
  /** Operations on this connector run one after another. */
  queue: Promise<unknown>;
}

export class StandaloneHerder extends AbstractHerder implements Herder {
  private readonly entries = new Map<string, Entry>();
  private readonly log: Logger = this.worker.loggers.logger(CONNECT_LOGGERS.standaloneHerder);

  connectors(): string[] {
    return [...this.entries.keys()].sort();
  }

  /**
   * Startup is complete: called once the connectors given on the command line are created, as Kafka's
   * ConnectStandalone calls StandaloneHerder.ready(). Until then GET /health answers that the worker is starting.
   */
  ready(): void {
    this.markReady();
  }

  /** As Kafka's standalone herder: the cluster is this worker. */
  async setClusterLoggerLevel(namespace: string, level: string): Promise<void> {
    this.setWorkerLoggerLevel(namespace, level);
  }

  /** The connector's entry; `notFound` is the 404's message, which Kafka words per operation. */
  private entry(name: string, notFound = `Connector ${name} not found`): Entry {
    const e = this.entries.get(name);
    if (e === undefined) throw new RestError(404, notFound);
    return e;
  }

  private serially<T>(e: Entry, op: () => Promise<T>): Promise<T> {
    const next = e.queue.then(op, op);
    e.queue = next.catch(() => {});
    return next;
  }

  connectorInfo(name: string): ConnectorInfo {
    const e = this.entry(name);
    return {
      name,
      config: { ...e.config },
      tasks: e.taskConfigs.map((_c, task) => ({ connector: name, task })),
      type: e.type,
    };
  }

  connectorConfig(name: string): Record<string, string> {
    return { ...this.entry(name).config };
  }

  async putConnectorConfig(
    name: string,
    config: Record<string, string>,
    allowReplace: boolean,
    initialState: TargetState = 'STARTED',
  ): Promise<{ created: boolean; info: ConnectorInfo }> {
    const existing = this.entries.get(name);
    if (existing !== undefined && !allowReplace) throw new RestError(409, `Connector ${name} already exists`);
    await this.checkValid(config);
    const type = this.worker.connectorType(config);
    if (existing !== undefined) {
      await this.serially(existing, async () => {
        await this.shutdown(existing);
        existing.config = { ...config };
        existing.type = type;
        await this.startup(existing);
      });
      return { created: false, info: this.connectorInfo(name) };
    }
    const e: Entry = {
      name,
      config: { ...config },
      type,
      target: initialState,
      instance: null,
      status: { state: 'UNASSIGNED', workerId: this.workerId(), trace: null },
      taskConfigs: [],
      tasks: new Map(),
      taskStatus: new Map(),
      activeTopics: new Set(),
      queue: Promise.resolve(),
    };
    this.entries.set(name, e);
    await this.serially(e, () => this.startup(e));
    return { created: true, info: this.connectorInfo(name) };
  }

  /**
   * Starts the connector and its tasks as its target state says. A PAUSED connector is not started and generates
   * no task configs (Kafka's updateConnectorTasks skips a connector that is not STARTED): the tasks it already has
   * start paused, and a new one has none until it is resumed.
   */
  private async startup(e: Entry): Promise<void> {
    if (!(await this.startInstance(e))) {
      if (e.target === 'PAUSED') await this.startTasks(e);
      return;
    }
    try {
      e.taskConfigs = await this.generateEntryTaskConfigs(e);
    } catch (err) {
      this.fail(e, err);
      return;
    }
    await this.startTasks(e);
  }

  /**
   * Starts the connector instance; false when its target state is STOPPED or PAUSED or it failed (its status says
   * so). As Kafka's WorkerConnector, a connector is started only when its target state is STARTED: PAUSED and
   * STOPPED suspend it (a PAUSED one keeps its task configs, a STOPPED one has none).
   */
  private async startInstance(e: Entry): Promise<boolean> {
    if (e.target === 'STOPPED') {
      e.status = { state: 'STOPPED', workerId: this.workerId(), trace: null };
      e.taskConfigs = [];
      return false;
    }
    if (e.target === 'PAUSED') {
      e.status = { state: 'PAUSED', workerId: this.workerId(), trace: null };
      return false;
    }
    try {
      e.instance = await this.worker.startConnector(e.config, {
        requestTaskReconfiguration: () => {
          this.serially(e, () => this.reconfigureTasks(e)).catch((err) => this.fail(e, err));
        },
        raiseError: (err) => this.fail(e, err),
      });
    } catch (err) {
      this.fail(e, err);
      return false;
    }
    e.status = { state: 'RUNNING', workerId: this.workerId(), trace: null };
    return true;
  }

  /**
   * Restarts the connector instance alone, as Kafka's StandaloneHerder.restartConnector: its tasks go on (a FAILED
   * one stays FAILED) unless the task configs the restarted connector generates differ, which restarts them all.
   */
  private async restartInstance(e: Entry): Promise<void> {
    await this.stopInstance(e);
    if (await this.startInstance(e)) await this.reconfigureTasks(e);
  }

  private async stopInstance(e: Entry): Promise<void> {
    const instance = e.instance;
    e.instance = null;
    if (instance !== null) await stopConnectorWithin(e.name, instance, this.log);
  }

  private fail(e: Entry, err: unknown): void {
    this.log.error(`Connector ${e.name} failed: ${traceOf(err)}`);
    e.status = { state: 'FAILED', workerId: this.workerId(), trace: traceOf(err) };
  }

  private generateEntryTaskConfigs(e: Entry): Promise<TaskConfig[]> {
    return this.generateTaskConfigs(e.instance!, e.config);
  }

  private async startTasks(e: Entry): Promise<void> {
    for (let i = 0; i < e.taskConfigs.length; i++) await this.startTask(e, i);
  }

  private async startTask(e: Entry, task: number): Promise<void> {
    const onStatus = (id: TaskId, status: Status) => {
      if (
        this.entries.get(id.connector) === e &&
        (e.tasks.get(id.task) !== undefined || status.state !== 'UNASSIGNED')
      ) {
        e.taskStatus.set(id.task, status);
      }
    };
    try {
      const runner = await this.worker.startTask(
        { connector: e.name, task },
        { ...e.config },
        e.taskConfigs[task]!,
        e.target === 'PAUSED',
        onStatus,
        (topic) => e.activeTopics.add(topic),
      );
      e.tasks.set(task, runner);
    } catch (err) {
      e.taskStatus.set(task, { state: 'FAILED', workerId: this.workerId(), trace: traceOf(err) });
    }
  }

  private async stopTasks(e: Entry): Promise<void> {
    const timeout = this.worker.o.config.parsed['task.shutdown.graceful.timeout.ms'] as number;
    const tasks = [...e.tasks.values()];
    e.tasks.clear();
    await Promise.all(tasks.map((t) => t.stop(timeout)));
    e.taskStatus.clear();
  }

  private async shutdown(e: Entry): Promise<void> {
    await this.stopTasks(e);
    await this.stopInstance(e);
    e.status = { state: 'UNASSIGNED', workerId: this.workerId(), trace: null };
  }

  private async reconfigureTasks(e: Entry): Promise<void> {
    if (e.instance === null || e.target !== 'STARTED') return;
    const next = await this.generateEntryTaskConfigs(e);
    if (JSON.stringify(next) === JSON.stringify(e.taskConfigs)) return;
    await this.stopTasks(e);
    e.taskConfigs = next;
    await this.startTasks(e);
  }

  async deleteConnector(name: string): Promise<void> {
    const e = this.entry(name);
    await this.serially(e, async () => {
      await this.shutdown(e);
      this.entries.delete(name);
    });
  }

  connectorStatus(name: string): ConnectorStateInfo {
    // Kafka's AbstractHerder.connectorStatus asks the status store, so its 404 speaks of a status.
    const e = this.entry(name, `No status found for connector ${name}`);
    return {
      name,
      connector: stateInfo(e.status),
      tasks: [...e.taskConfigs.keys()].map((id) => this.taskStatus(name, id)),
      type: e.type,
    };
  }

  taskStatus(name: string, task: number): TaskStateInfo {
    const e = this.entry(name);
    if (!Number.isInteger(task) || task < 0 || task >= e.taskConfigs.length) {
      throw new RestError(404, `No status found for task ${name}-${task}`);
    }
    const s = e.taskStatus.get(task) ??
      e.tasks.get(task)?.status() ?? { state: 'UNASSIGNED', workerId: this.workerId(), trace: null };
    return { id: task, ...stateInfo(s) };
  }

  taskConfigs(name: string): TaskInfo[] {
    const e = this.entry(name);
    return e.taskConfigs.map((config, task) => ({ id: { connector: name, task }, config: { ...config } }));
  }

  connectorActiveTopics(name: string): string[] {
    return [...this.entry(name).activeTopics].sort();
  }

  resetConnectorActiveTopics(name: string): void {
    this.entry(name).activeTopics.clear();
  }

  async restartConnector(name: string, request: RestartRequest): Promise<ConnectorStateInfo | null> {
    const e = this.entry(name);
    if (!request.includeTasks && !request.onlyFailed) {
      await this.serially(e, () => this.restartInstance(e));
      return null;
    }
    const restartConnector = !request.onlyFailed || e.status.state === 'FAILED';
    const tasks = request.includeTasks
      ? [...e.taskConfigs.keys()].filter(
          (t) => !request.onlyFailed || this.taskStatus(name, t).state === 'FAILED',
        )
      : [];
    const plan = this.connectorStatus(name);
    if (restartConnector) plan.connector = { ...plan.connector, state: 'RESTARTING' };
    delete plan.connector.trace;
    plan.tasks = plan.tasks.map((t) =>
      tasks.includes(t.id) ? { id: t.id, state: 'RESTARTING', worker_id: t.worker_id } : t,
    );
    // The answer describes the plan; the restart itself runs after it (202 Accepted, as Kafka does).
    // As Kafka's restartConnectorAndTasks: the connector instance if planned, then the planned tasks only.
    this.serially(e, async () => {
      if (restartConnector) await this.restartInstance(e);
      for (const t of tasks) await this.restartOneTask(e, t);
    }).catch((err) => this.fail(e, err));
    return plan;
  }

  async restartTask(name: string, task: number): Promise<void> {
    const e = this.entry(name);
    this.taskStatus(name, task);
    await this.serially(e, () => this.restartOneTask(e, task));
  }

  private async restartOneTask(e: Entry, task: number): Promise<void> {
    const runner = e.tasks.get(task);
    e.tasks.delete(task);
    if (runner !== undefined)
      await runner.stop(this.worker.o.config.parsed['task.shutdown.graceful.timeout.ms'] as number);
    e.taskStatus.delete(task);
    if (e.target !== 'STOPPED') await this.startTask(e, task);
  }

  /**
   * As Kafka's AbstractHerder.pauseConnector, whatever the target state was (a STOPPED connector too): the
   * connector instance is stopped (WorkerConnector.suspend) and reports PAUSED unless it failed, its tasks pause.
   */
  async pauseConnector(name: string): Promise<void> {
    const e = this.entry(name, `Unknown connector ${name}`);
    await this.serially(e, async () => {
      e.target = 'PAUSED';
      await this.stopInstance(e);
      if (e.status.state !== 'FAILED') e.status = { state: 'PAUSED', workerId: this.workerId(), trace: null };
      for (const t of e.tasks.values()) t.pause();
    });
  }

  /**
   * Starts the connector instance again (paused or stopped, it has none) and lets it generate its task configs:
   * unchanged ones keep the paused tasks, which resume; a connector resumed from STOPPED gets its tasks anew.
   */
  async resumeConnector(name: string): Promise<void> {
    const e = this.entry(name, `Unknown connector ${name}`);
    await this.serially(e, async () => {
      e.target = 'STARTED';
      for (const t of e.tasks.values()) t.resume();
      if (e.instance !== null) {
        if (e.status.state === 'PAUSED') e.status = { ...e.status, state: 'RUNNING' };
        return;
      }
      // As Kafka's WorkerConnector: a connector that failed stays FAILED until it is restarted (or stopped).
      if (e.status.state === 'FAILED' || !(await this.startInstance(e))) return;
      try {
        await this.reconfigureTasks(e);
      } catch (err) {
        this.fail(e, err);
      }
    });
  }

  async stopConnector(name: string): Promise<void> {
    const e = this.entry(name);
    await this.serially(e, async () => {
      await this.shutdown(e);
      e.target = 'STOPPED';
      e.taskConfigs = [];
      e.status = { state: 'STOPPED', workerId: this.workerId(), trace: null };
    });
  }

  async connectorOffsets(name: string): Promise<ConnectorOffset[]> {
    const e = this.entry(name);
    if (e.type === 'source') return this.worker.offsets.list(name);
    return this.sinkOffsets(name, e.config);
  }

  /** PATCH (offsets given) or DELETE (null) of a stopped connector's offsets (KIP-875). */
  async alterConnectorOffsets(name: string, offsets: ConnectorOffset[] | null): Promise<string> {
    const e = this.entry(name);
    return this.serially(e, async () => {
      if (e.target !== 'STOPPED') {
        throw new RestError(
          400,
          `Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/${name}/stop' endpoint`,
        );
      }
      if (e.type !== 'source') return this.alterSinkOffsets(name, e.config, offsets);
      return this.alterSourceOffsets(name, e.config, this.worker.offsets, offsets);
    });
  }

  async stop(): Promise<void> {
    for (const e of [...this.entries.values()]) await this.serially(e, () => this.shutdown(e));
    this.entries.clear();
  }

  version(): string {
    return BROOK_CONNECT_VERSION;
  }
}

export { ConnectException };
