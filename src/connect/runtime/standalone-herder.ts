// The standalone herder: one worker runs every connector and task; connector configs live in memory (given on
// the command line or through the REST API, as in Kafka's standalone mode) and source offsets in
// offset.storage.file.filename. Every change of state happens between awaits in one place per operation
// (create, update, pause, resume, stop, restart, delete), and operations on one connector are serialized by
// a per-connector queue so that a restart and a delete cannot interleave.

import { Admin } from '../../client/index.js';
import type { ConfigKey, ConfigValue } from '../api/config-def.js';
import { type Connector, SinkConnector, type TaskConfig } from '../api/connector.js';
import { ConnectException, RestError } from '../errors.js';
import { BROOK_CONNECT_VERSION } from '../version.js';
import {
  addErrors,
  checkConnectorName,
  sinkConnectorDef,
  sinkTopicErrors,
  sourceConnectorDef,
  splitList,
} from './connector-config.js';
import type {
  ConfigInfos,
  ConfigKeyInfo,
  ConnectorInfo,
  ConnectorOffset,
  ConnectorStateInfo,
  Herder,
  PluginInfo,
  RestartRequest,
  TaskInfo,
  TaskStateInfo,
} from './herder.js';
import type { PluginDesc } from './plugins.js';
import { type Status, type TargetState, traceOf } from './status.js';
import type { Worker } from './worker.js';
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

export class StandaloneHerder implements Herder {
  private readonly entries = new Map<string, Entry>();
  private clusterId: string | null | undefined;

  constructor(private readonly worker: Worker) {}

  workerId(): string {
    return this.worker.workerId;
  }

  async kafkaClusterId(): Promise<string | null> {
    if (this.clusterId !== undefined) return this.clusterId;
    const admin = new Admin({ bootstrapServers: this.worker.o.config.bootstrapServers });
    try {
      this.clusterId = (await admin.describeCluster()).clusterId;
    } finally {
      await admin.close();
    }
    return this.clusterId;
  }

  connectors(): string[] {
    return [...this.entries.keys()].sort();
  }

  private entry(name: string): Entry {
    const e = this.entries.get(name);
    if (e === undefined) throw new RestError(404, `Connector ${name} not found`);
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
    checkConnectorName(name);
    const existing = this.entries.get(name);
    if (existing !== undefined && !allowReplace) throw new RestError(409, `Connector ${name} already exists`);
    const validation = await this.validateConnectorConfig(config);
    if (validation.error_count > 0) {
      const messages = validation.configs.flatMap((c) => c.value.errors);
      throw new RestError(
        400,
        `Connector configuration is invalid and contains the following ${messages.length} error(s):\n${messages.join('\n')}\n` +
          'You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`',
      );
    }
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

  /** Starts the connector and its tasks as its target state says. */
  private async startup(e: Entry): Promise<void> {
    if (e.target === 'STOPPED') {
      e.status = { state: 'STOPPED', workerId: this.workerId(), trace: null };
      e.taskConfigs = [];
      return;
    }
    try {
      e.instance = await this.worker.startConnector(e.config, {
        requestTaskReconfiguration: () => {
          this.serially(e, () => this.reconfigureTasks(e)).catch((err) => this.fail(e, err));
        },
        raiseError: (err) => this.fail(e, err),
      });
      e.status = {
        state: e.target === 'PAUSED' ? 'PAUSED' : 'RUNNING',
        workerId: this.workerId(),
        trace: null,
      };
      e.taskConfigs = await this.generateTaskConfigs(e);
    } catch (err) {
      this.fail(e, err);
      return;
    }
    await this.startTasks(e);
  }

  private fail(e: Entry, err: unknown): void {
    this.worker.o.log(`Connector ${e.name} failed: ${traceOf(err)}`);
    e.status = { state: 'FAILED', workerId: this.workerId(), trace: traceOf(err) };
  }

  private async generateTaskConfigs(e: Entry): Promise<TaskConfig[]> {
    const max = Number(e.config['tasks.max'] ?? 1);
    const configs = (await e.instance!.taskConfigs(max)).slice(0, max);
    const taskClass = e.instance!.taskClass().name;
    return configs.map((c) => {
      const out: TaskConfig = { ...c, 'task.class': taskClass };
      if (e.instance instanceof SinkConnector) {
        if (e.config.topics !== undefined) out.topics = e.config.topics;
        if (e.config['topics.regex'] !== undefined) out['topics.regex'] = e.config['topics.regex'];
      }
      return out;
    });
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
    const instance = e.instance;
    e.instance = null;
    if (instance !== null) {
      try {
        await instance.stop();
      } catch (err) {
        this.worker.o.log(`Connector ${e.name} failed to stop: ${traceOf(err)}`);
      }
    }
    e.status = { state: 'UNASSIGNED', workerId: this.workerId(), trace: null };
  }

  private async reconfigureTasks(e: Entry): Promise<void> {
    if (e.instance === null || e.target === 'STOPPED') return;
    const next = await this.generateTaskConfigs(e);
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
    const e = this.entry(name);
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
      await this.serially(e, async () => {
        await this.shutdown(e);
        await this.startup(e);
      });
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
    this.serially(e, async () => {
      if (restartConnector) {
        await this.shutdown(e);
        await this.startup(e);
        return;
      }
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

  async pauseConnector(name: string): Promise<void> {
    const e = this.entry(name);
    await this.serially(e, async () => {
      if (e.target === 'STOPPED') return;
      e.target = 'PAUSED';
      if (e.status.state === 'RUNNING') e.status = { ...e.status, state: 'PAUSED' };
      for (const t of e.tasks.values()) t.pause();
    });
  }

  async resumeConnector(name: string): Promise<void> {
    const e = this.entry(name);
    await this.serially(e, async () => {
      const wasStopped = e.target === 'STOPPED';
      e.target = 'STARTED';
      if (wasStopped) {
        await this.startup(e);
        return;
      }
      if (e.status.state === 'PAUSED') e.status = { ...e.status, state: 'RUNNING' };
      for (const t of e.tasks.values()) t.resume();
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
    const admin = new Admin({ bootstrapServers: this.worker.o.config.bootstrapServers });
    try {
      const committed = await admin.listConsumerGroupOffsets(`connect-${name}`);
      return committed.map((o) => ({
        partition: { kafka_topic: o.topic, kafka_partition: o.partition },
        offset: { kafka_offset: o.offset },
      }));
    } finally {
      await admin.close();
    }
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
      if (e.type === 'source') {
        const entries =
          offsets ?? this.worker.offsets.list(name).map((o) => ({ partition: o.partition, offset: null }));
        await this.worker.offsets.write(name, entries);
      } else {
        await this.alterSinkOffsets(name, offsets);
      }
      return offsets === null
        ? 'The offsets for this connector have been reset successfully'
        : 'The offsets for this connector have been altered successfully';
    });
  }

  private async alterSinkOffsets(name: string, offsets: ConnectorOffset[] | null): Promise<void> {
    const admin = new Admin({ bootstrapServers: this.worker.o.config.bootstrapServers });
    const group = `connect-${name}`;
    try {
      if (offsets === null) {
        const committed = await admin.listConsumerGroupOffsets(group);
        if (committed.length > 0) await admin.deleteConsumerGroupOffsets(group, committed);
        return;
      }
      const toSet: { topic: string; partition: number; offset: number }[] = [];
      const toDelete: { topic: string; partition: number }[] = [];
      for (const o of offsets) {
        const topic = o.partition.kafka_topic;
        const partition = o.partition.kafka_partition;
        if (typeof topic !== 'string' || typeof partition !== 'number') {
          throw new RestError(
            400,
            'Partitions of sink connectors need "kafka_topic" (a string) and "kafka_partition" (an integer)',
          );
        }
        const offset = o.offset?.kafka_offset;
        if (o.offset === null) toDelete.push({ topic, partition });
        else if (typeof offset === 'number' && offset >= 0) toSet.push({ topic, partition, offset });
        else
          throw new RestError(400, 'Offsets of sink connectors need "kafka_offset" (a non-negative integer)');
      }
      if (toSet.length > 0) await admin.alterConsumerGroupOffsets(group, toSet);
      if (toDelete.length > 0) await admin.deleteConsumerGroupOffsets(group, toDelete);
    } finally {
      await admin.close();
    }
  }

  async validateConnectorConfig(config: Record<string, string>): Promise<ConfigInfos> {
    const className = config['connector.class'];
    if (className === undefined || className.trim() === '') {
      throw new RestError(400, `Connector config ${JSON.stringify(config)} contains no connector type`);
    }
    let desc: PluginDesc;
    try {
      desc = this.worker.plugins.connector(className);
    } catch (err) {
      throw new RestError(400, (err as Error).message);
    }
    const connector = new desc.ctor() as Connector;
    const def = desc.type === 'sink' ? sinkConnectorDef() : sourceConnectorDef();
    const values = def.validate(config);
    if (desc.type === 'sink') addErrors(values, sinkTopicErrors(config));
    this.checkClasses(config, values);
    const own = connector.config();
    let ownValues: ConfigValue[];
    try {
      ownValues = await connector.validate({ ...config });
    } catch (err) {
      ownValues = [
        {
          name: 'connector.class',
          value: className,
          recommendedValues: [],
          errors: [(err as Error).message],
          visible: true,
        },
      ];
    }
    const keys = [...def.keys(), ...own.keys().filter((k) => def.key(k.name) === undefined)];
    const allValues = [...values, ...ownValues.filter((v) => def.key(v.name) === undefined)];
    const groups = [...def.groups(), ...own.groups().filter((g) => !def.groups().includes(g))];
    const configs = keys.map((key, i) => {
      const v = allValues.find((x) => x.name === key.name) ?? {
        name: key.name,
        value: null,
        recommendedValues: [],
        errors: [],
        visible: true,
      };
      return { definition: keyInfo(key, i), value: valueInfo(v) };
    });
    for (const v of allValues) {
      if (keys.some((k) => k.name === v.name)) continue;
      configs.push({
        definition: keyInfo(
          { name: v.name, type: 'STRING', importance: 'HIGH', documentation: '', required: false },
          configs.length,
        ),
        value: valueInfo(v),
      });
    }
    return {
      name: desc.className,
      error_count: configs.reduce((n, c) => n + c.value.errors.length, 0),
      groups,
      configs,
    };
  }

  /** Converters, transforms and predicates named in a config must exist (reported on their keys). */
  private checkClasses(config: Record<string, string>, values: ConfigValue[]): void {
    const plugins = this.worker.plugins;
    for (const key of ['key.converter', 'value.converter']) {
      const name = config[key];
      if (name === undefined || name === '') continue;
      try {
        plugins.converter(name);
      } catch (err) {
        values
          .find((v) => v.name === key)
          ?.errors.push(`Invalid value ${name} for configuration ${key}: ${(err as Error).message}`);
      }
    }
    const extra = (name: string, message: string) =>
      values.push({
        name,
        value: config[name] ?? null,
        recommendedValues: [],
        errors: [message],
        visible: true,
      });
    for (const alias of splitList(config.transforms)) {
      const key = `transforms.${alias}.type`;
      const type = config[key];
      if (type === undefined || type === '')
        extra(key, `Missing required configuration "${key}" which has no default value.`);
      else {
        try {
          const t = new (plugins.transformation(type))();
          for (const v of t.config().validate(withoutPrefix(config, `transforms.${alias}.`))) {
            for (const err of v.errors) extra(`transforms.${alias}.${v.name}`, err);
          }
        } catch (err) {
          extra(key, `Invalid value ${type} for configuration ${key}: ${(err as Error).message}`);
        }
      }
    }
    for (const alias of splitList(config.predicates)) {
      const key = `predicates.${alias}.type`;
      const type = config[key];
      if (type === undefined || type === '')
        extra(key, `Missing required configuration "${key}" which has no default value.`);
      else {
        try {
          plugins.predicate(type);
        } catch (err) {
          extra(key, `Invalid value ${type} for configuration ${key}: ${(err as Error).message}`);
        }
      }
    }
  }

  connectorPlugins(connectorsOnly: boolean): PluginInfo[] {
    return this.worker.plugins
      .list()
      .filter((p) => !connectorsOnly || p.type === 'source' || p.type === 'sink')
      .map((p) =>
        p.type === 'source' || p.type === 'sink'
          ? { class: p.className, type: p.type, version: p.version }
          : { class: p.className, type: p.type, version: p.version },
      )
      .sort((a, b) => (a.class < b.class ? -1 : a.class > b.class ? 1 : 0));
  }

  pluginConfig(pluginName: string): ConfigKeyInfo[] {
    const desc = this.worker.plugins.find(pluginName);
    if (desc === undefined) throw new RestError(404, `Unknown plugin ${pluginName}.`);
    const instance = new desc.ctor() as { config?: () => { keys(): ConfigKey[] } };
    if (typeof instance.config !== 'function') return [];
    return instance
      .config()
      .keys()
      .map((k, i) => keyInfo(k, i));
  }

  async stop(): Promise<void> {
    for (const e of [...this.entries.values()]) await this.serially(e, () => this.shutdown(e));
    this.entries.clear();
  }

  version(): string {
    return BROOK_CONNECT_VERSION;
  }
}

function withoutPrefix(config: Record<string, string>, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(config)) if (k.startsWith(prefix)) out[k.slice(prefix.length)] = v;
  return out;
}

function stateInfo(s: Status): { state: string; worker_id: string; trace?: string } {
  return s.trace === null
    ? { state: s.state, worker_id: s.workerId }
    : { state: s.state, worker_id: s.workerId, trace: s.trace };
}

function valueToString(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.join(',');
  return String(v);
}

function keyInfo(k: ConfigKey, order: number): ConfigKeyInfo {
  return {
    name: k.name,
    type: k.type,
    required: k.required,
    default_value: k.required ? null : valueToString(k.defaultValue),
    importance: k.importance,
    documentation: k.documentation,
    group: k.group ?? null,
    width: k.width ?? 'NONE',
    display_name: k.displayName ?? k.name,
    dependents: k.dependents ?? [],
    order: k.orderInGroup ?? order,
  };
}

function valueInfo(v: ConfigValue): {
  name: string;
  value: string | null;
  recommended_values: string[];
  errors: string[];
  visible: boolean;
} {
  return {
    name: v.name,
    value: valueToString(v.value),
    recommended_values: v.recommendedValues.map(String),
    errors: v.errors,
    visible: v.visible,
  };
}

export { ConnectException };
