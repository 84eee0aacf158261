// What every herder shares (Kafka's AbstractHerder): config validation against the connector's ConfigDef and the
// common/source/sink keys, the plugin listings, the Kafka cluster id, task config generation, and the committed
// offsets of sink connectors (their consumer group: connect-<name> unless overridden, Worker.sinkGroupId). The
// standalone and distributed herders add where configs live and where connectors and tasks run.

import type { GroupOffset } from '../../client/admin.js';
import { KafkaProtocolError } from '../../client/errors.js';
import { Admin } from '../../client/index.js';
import type { Logger } from '../../common/logger.js';
import type { ConfigKey, ConfigValue } from '../api/config-def.js';
import {
  type Connector,
  SinkConnector,
  type SinkOffsets,
  type SourceConnector,
  type SourceOffsets,
  type TaskConfig,
} from '../api/connector.js';
import { ConnectException, RestError } from '../errors.js';
import { aliasConfigKeys } from './alias-config-keys.js';
import { type ClientKind, clientOverrides, workerOriginalsOptions } from './client-configs.js';
import { addErrors, sinkConnectorDef, sinkTopicErrors, sourceConnectorDef } from './connector-config.js';
import type { ConfigInfos, ConfigKeyInfo, ConnectorOffset, PluginInfo } from './herder.js';
import { CONNECT_LOGGERS, type LoggerLevel, log4jLevel } from './loggers.js';
import type { OffsetStore } from './offset-store.js';
import { type PluginDesc, UNDEFINED_VERSION } from './plugins.js';
import { type Status, traceOf } from './status.js';
import type { Worker } from './worker.js';

export abstract class AbstractHerder {
  private clusterId: string | null | undefined;
  private readonly herderLog: Logger;
  private readyFlag = false;
  private readonly readyOnce: Promise<void>;
  private resolveReady: () => void = () => {};

  constructor(protected readonly worker: Worker) {
    this.herderLog = worker.loggers.logger(CONNECT_LOGGERS.abstractHerder);
    this.readyOnce = new Promise((resolve) => {
      this.resolveReady = resolve;
    });
  }

  isReady(): boolean {
    return this.readyFlag;
  }

  /** Startup is complete (Kafka's AbstractHerder.ready): GET /health may answer healthy from now on. */
  protected markReady(): void {
    this.readyFlag = true;
    this.resolveReady();
  }

  /** Resolves once the herder is ready; the distributed herder also waits for its work loop (healthCheck there). */
  healthCheck(): Promise<void> {
    return this.readyOnce;
  }

  /** /admin/loggers reads and sets the levels of the worker's own loggers (loggers.ts). */
  loggerLevel(name: string): LoggerLevel | null {
    return this.worker.loggers.level(name);
  }

  allLoggerLevels(): Record<string, LoggerLevel> {
    return this.worker.loggers.allLevels();
  }

  setWorkerLoggerLevel(namespace: string, level: string): string[] {
    const known = log4jLevel(level);
    // The REST layer refuses an unknown level first; one read from the config topic is ignored, as Kafka does.
    if (known === null) {
      this.herderLog.warn(`Ignoring request to set invalid level '${level}' for namespace ${namespace}`);
      return [];
    }
    return this.worker.loggers.setLevel(namespace, known);
  }

  workerId(): string {
    return this.worker.workerId;
  }

  /**
   * As Kafka's WorkerConfig.lookupKafkaClusterId, whose admin client is made of the worker config's originals: its
   * client keys (request.timeout.ms...) and its `client.id`, which names the admin on the wire.
   */
  async kafkaClusterId(): Promise<string | null> {
    if (this.clusterId !== undefined) return this.clusterId;
    const raw = this.worker.o.config.raw;
    const clientId = (raw['client.id'] ?? '').trim();
    const admin = new Admin({
      ...this.worker.internalClientOptions,
      ...workerOriginalsOptions('admin', raw),
      bootstrapServers: this.worker.o.config.bootstrapServers,
      ...(clientId === '' ? {} : { clientId }),
    });
    try {
      this.clusterId = (await admin.describeCluster()).clusterId;
    } finally {
      await admin.close();
    }
    return this.clusterId;
  }

  /** Validates a config and throws Kafka's 400 listing every error. */
  protected async checkValid(config: Record<string, string>): Promise<void> {
    const validation = await this.validateConnectorConfig(config);
    if (validation.error_count > 0) throw invalidConfigError(validation);
  }

  /** The task configs a started connector asks for, at most tasks.max, with task.class and the sink's topics. */
  protected async generateTaskConfigs(
    instance: Connector,
    config: Record<string, string>,
  ): Promise<TaskConfig[]> {
    const max = Number(config['tasks.max'] ?? 1);
    const configs = (await instance.taskConfigs(max)).slice(0, max);
    const taskClass = instance.taskClass().name;
    // The connector saw its config resolved: resolved secrets go back to their variables before being stored.
    return this.worker.o.config.transformer.reverse(config, configs).map((c) => {
      const out: TaskConfig = { ...c, 'task.class': taskClass };
      if (instance instanceof SinkConnector) {
        if (config.topics !== undefined) out.topics = config.topics;
        if (config['topics.regex'] !== undefined) out['topics.regex'] = config['topics.regex'];
      }
      return out;
    });
  }

  /**
   * KIP-875: hands the offsets a request is about to write to a new, unstarted instance of the connector's class
   * with its resolved config, as Kafka's Worker.modifyConnectorOffsets does before writing them, and answers the
   * response's message. A ConnectException the connector throws refuses the request with its own message, any
   * other error with Kafka's "Failed to modify offsets for ..." (both 500, as Kafka's ConnectExceptionMapper
   * answers a ConnectException); nothing is written then.
   */
  protected async connectorAlterOffsets(
    name: string,
    config: Record<string, string>,
    offsets: SourceOffsets | SinkOffsets,
  ): Promise<boolean> {
    const desc = this.worker.plugins.connector(config['connector.class'] ?? '');
    const connector = new desc.ctor() as Connector;
    const resolved = this.worker.resolvedConfig(config);
    const type = desc.type === 'sink' ? 'sink' : 'source';
    try {
      return connector instanceof SinkConnector
        ? await connector.alterOffsets(resolved, offsets as SinkOffsets)
        : await (connector as SourceConnector).alterOffsets(resolved, offsets as SourceOffsets);
    } catch (err) {
      this.herderLog.error(`Failed to modify offsets for ${type} connector ${name}: ${traceOf(err)}`);
      throw new RestError(
        500,
        err instanceof ConnectException
          ? err.message
          : `Failed to modify offsets for ${type} connector ${name}`,
      );
    }
  }

  /**
   * Writes a source connector's offsets (null: resets every partition the store holds) once its alterOffsets()
   * agreed, and answers the response's message. `write` writes them (the store's write(), unless exactly-once).
   */
  protected async alterSourceOffsets(
    name: string,
    config: Record<string, string>,
    store: OffsetStore,
    offsets: ConnectorOffset[] | null,
    write: (entries: ConnectorOffset[]) => Promise<void> = (entries) => store.write(name, entries),
  ): Promise<string> {
    const entries = offsets ?? store.list(name).map((o) => ({ partition: o.partition, offset: null }));
    const managed = await this.connectorAlterOffsets(name, config, entries);
    await write(entries);
    return offsetsModifiedMessage(managed, offsets === null);
  }

  /** A sink connector's committed offsets: those of its consumer group. */
  protected async sinkOffsets(name: string, config: Record<string, string>): Promise<ConnectorOffset[]> {
    const admin = this.worker.sinkOffsetsAdmin(name, config);
    try {
      const committed = await admin.listConsumerGroupOffsets(this.worker.sinkGroupId(name, config));
      return committed.map((o) => ({
        partition: { kafka_topic: o.topic, kafka_partition: o.partition },
        offset: { kafka_offset: o.offset },
      }));
    } finally {
      await admin.close();
    }
  }

  /**
   * Alters (offsets given) or resets (null) a stopped sink connector's committed offsets. As Kafka's worker, a
   * request the group coordinator refuses fails (500) rather than report offsets that were not written: a
   * partition of a topic that does not exist, or a group whose tasks still consume.
   */
  protected async alterSinkOffsets(
    name: string,
    config: Record<string, string>,
    offsets: ConnectorOffset[] | null,
  ): Promise<string> {
    const toSet: { topic: string; partition: number; offset: number }[] = [];
    const toDelete: { topic: string; partition: number }[] = [];
    for (const o of offsets ?? []) {
      const { topic, partition } = sinkPartition(o.partition);
      if (o.offset === null) {
        toDelete.push({ topic, partition });
        continue;
      }
      const offset = sinkOffset(o.offset);
      if (offset < 0)
        throw new RestError(400, 'Offsets of sink connectors need "kafka_offset" (a non-negative integer)');
      toSet.push({ topic, partition, offset });
    }
    const { admin, group } = this.sinkOffsetsClients(name, config);
    const results: { error: KafkaProtocolError | null }[] = [];
    let managed: boolean;
    try {
      // As Kafka's Worker: the partitions a reset removes are listed first, then the connector is asked.
      let committed: GroupOffset[] = [];
      try {
        if (offsets === null) committed = await admin.listConsumerGroupOffsets(group);
      } catch (err) {
        this.herderLog.error(
          `Failed to list offsets prior to resetting offsets for sink connector ${name}: ${err}`,
        );
        throw new RestError(
          500,
          `Failed to list offsets prior to resetting offsets for sink connector ${name}`,
        );
      }
      const asked: SinkOffsets =
        offsets === null
          ? committed.map((o) => ({ topic: o.topic, partition: o.partition, offset: null }))
          : [...toSet, ...toDelete.map((o) => ({ ...o, offset: null }))];
      managed = await this.connectorAlterOffsets(name, config, asked);
      if (offsets === null) {
        // Kafka's resetSinkConnectorOffsets deletes the whole group; one already gone is no error (a reset is
        // idempotent), and one with members answers NON_EMPTY_GROUP.
        const [deleted] = await admin.deleteGroups([group]).catch((err: unknown) => {
          if (err instanceof KafkaProtocolError && err.type === 'GROUP_ID_NOT_FOUND') return [];
          throw err;
        });
        if (deleted !== undefined && deleted.error?.type !== 'GROUP_ID_NOT_FOUND') results.push(deleted);
      } else {
        if (toSet.length > 0) results.push(...(await admin.alterConsumerGroupOffsets(group, toSet)));
        if (toDelete.length > 0) results.push(...(await admin.deleteConsumerGroupOffsets(group, toDelete)));
      }
    } catch (err) {
      if (err instanceof RestError) throw err;
      throw this.sinkOffsetsFailure(name, offsets === null, err);
    } finally {
      await admin.close();
    }
    const failed = results.find((r) => r.error !== null);
    if (failed !== undefined) throw this.sinkOffsetsFailure(name, offsets === null, failed.error);
    return offsetsModifiedMessage(managed, offsets === null);
  }

  /**
   * The group and admin an offsets change of a sink uses. A setting that does not parse (a ConfigException: in
   * Kafka a client's, no ConnectException) fails the change as Kafka's Worker wraps it, 500 "Failed to modify
   * offsets for sink connector <name>".
   */
  private sinkOffsetsClients(name: string, config: Record<string, string>): { admin: Admin; group: string } {
    try {
      const group = this.worker.sinkGroupId(name, config);
      return { admin: this.worker.sinkOffsetsAdmin(name, config), group };
    } catch (err) {
      if (err instanceof RestError) throw err;
      this.herderLog.error(`Failed to modify offsets for sink connector ${name}: ${traceOf(err)}`);
      throw new RestError(500, `Failed to modify offsets for sink connector ${name}`);
    }
  }

  /** Kafka's answer (Worker.alterSinkConnectorOffsets, resetSinkConnectorOffsets) when the coordinator refuses. */
  private sinkOffsetsFailure(name: string, isReset: boolean, cause: unknown): RestError {
    const verb = isReset ? 'reset' : 'alter';
    this.herderLog.error(
      `Failed to ${verb} consumer group offsets for sink connector ${name}: ${String(cause)}`,
    );
    const type = cause instanceof KafkaProtocolError ? cause.type : '';
    // Members still in the group: tasks that have not stopped yet, or a connector resumed meanwhile.
    if (type === 'UNKNOWN_MEMBER_ID' || type === 'GROUP_SUBSCRIBED_TO_TOPIC' || type === 'NON_EMPTY_GROUP') {
      return new RestError(
        500,
        `Failed to ${verb} consumer group offsets for connector ${name} either because its tasks haven't stopped completely yet or the connector was resumed before the request to ${verb} its offsets could be successfully completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks.`,
      );
    }
    return new RestError(
      500,
      isReset
        ? `Failed to reset consumer group offsets for sink connector ${name}`
        : `Failed to alter consumer group offsets for connector ${name}`,
    );
  }

  async validateConnectorConfig(config: Record<string, string>): Promise<ConfigInfos> {
    const className = config['connector.class'];
    if (className === undefined || className.trim() === '') {
      throw new RestError(400, `Connector config ${JSON.stringify(config)} contains no connector type`);
    }
    // An unknown class is Plugins' plain ConnectException, a 500 as in Kafka (not a validation error).
    const desc: PluginDesc = this.worker.plugins.connector(className);
    const connector = new desc.ctor() as Connector;
    const def = desc.type === 'sink' ? sinkConnectorDef() : sourceConnectorDef();
    const values = def.validate(config);
    if (desc.type === 'sink') addErrors(values, sinkTopicErrors(config));
    else await this.validateSourceConnector(connector as SourceConnector, config, values);
    this.checkConverters(config, values);
    const aliases = aliasConfigKeys(this.worker.plugins, config);
    values.push(...aliases.values);
    const overrides = this.clientOverrideValues(desc.type === 'sink' ? 'sink' : 'source', config);
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
    // As Kafka's ConnectorConfig.enrich: the framework's keys, then those of the transformations and predicates.
    const enriched = [...def.keys(), ...aliases.keys];
    const enrichedNames = new Set(enriched.map((k) => k.name));
    const keys = [...enriched, ...own.keys().filter((k) => !enrichedNames.has(k.name))];
    const allValues = [...values, ...ownValues.filter((v) => !enrichedNames.has(v.name))];
    const groups = [...new Set([...def.groups(), ...aliases.keys.map((k) => k.group!), ...own.groups()])];
    const keyNames = new Set(keys.map((k) => k.name));
    // As Kafka's generateResult: a value of no defined key comes first, with no definition.
    const configs: ConfigInfos['configs'] = allValues
      .filter((v) => !keyNames.has(v.name))
      .map((v) => ({ definition: null, value: valueInfo(v) }));
    keys.forEach((key, i) => {
      const v = allValues.find((x) => x.name === key.name) ?? {
        name: key.name,
        value: null,
        recommendedValues: [],
        errors: [],
        visible: true,
      };
      configs.push({ definition: keyInfo(key, i), value: valueInfo(v) });
    });
    // The client overrides after them (Kafka's mergeConfigInfos). Kafka defines one with its client's ConfigDef
    // key; Brook's clients have no such definitions, so each gets a plain one under its prefixed name.
    for (const v of overrides) {
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

  /**
   * The connector's client overrides for the clients its tasks use, each with the worker policy's refusal as its
   * error (Kafka's AbstractHerder.validateClientOverrides), so a refused override fails validation and creation.
   * As in Kafka, overrides of a client the connector does not use are not judged (nor used).
   */
  private clientOverrideValues(type: 'source' | 'sink', config: Record<string, string>): ConfigValue[] {
    const worker = this.worker.o.config.raw;
    return this.clientsUsed(type, config).flatMap((kind) =>
      clientOverrides(kind, worker, config).map((o) => ({
        name: o.key,
        value: o.value,
        recommendedValues: [],
        errors: o.refusal === null ? [] : [o.refusal],
        visible: true,
      })),
    );
  }

  /**
   * The clients a connector's tasks use (Kafka's connectorUsesProducer/Admin/Consumer, in that order): a source's
   * producer, and an admin when it configures topic creation; a sink's consumer, and a producer and an admin for
   * its dead letter queue. The distributed herder adds a source's admin and consumer for its own offsets topic.
   */
  protected clientsUsed(type: 'source' | 'sink', config: Record<string, string>): ClientKind[] {
    if (type === 'source') {
      const topicCreation = Object.keys(config).some((k) => k.startsWith('topic.creation.'));
      return topicCreation ? ['producer', 'admin'] : ['producer'];
    }
    const dlq = (config['errors.deadletterqueue.topic.name'] ?? '').trim() !== '';
    return dlq ? ['producer', 'admin', 'consumer'] : ['consumer'];
  }

  /** Checks a source connector config beyond its keys (the distributed herder adds KIP-618's checks). */
  protected async validateSourceConnector(
    _connector: SourceConnector,
    _config: Record<string, string>,
    _values: ConfigValue[],
  ): Promise<void> {}

  /** Converters named in a config must exist (reported on their keys). */
  private checkConverters(config: Record<string, string>, values: ConfigValue[]): void {
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
  }

  connectorPlugins(connectorsOnly: boolean): PluginInfo[] {
    return (
      this.worker.plugins
        .list()
        .filter((p) => !connectorsOnly || p.type === 'source' || p.type === 'sink')
        // As Kafka's PluginInfo (NoVersionFilter): a plugin without a version has no "version" key.
        .map((p) =>
          p.version === UNDEFINED_VERSION
            ? { class: p.className, type: p.type }
            : { class: p.className, type: p.type, version: p.version },
        )
        .sort((a, b) => (a.class < b.class ? -1 : a.class > b.class ? 1 : 0))
    );
  }

  pluginConfig(pluginName: string): ConfigKeyInfo[] {
    const desc = this.worker.plugins.find(pluginName);
    if (desc === undefined) throw new RestError(404, `Unknown plugin ${pluginName}.`);
    const instance = new desc.ctor() as { config?: () => { keys(): ConfigKey[] } };
    const own = typeof instance.config === 'function' ? instance.config().keys() : [];
    // As Kafka's connectorPluginConfig: a connector's keys come with the framework's (SinkConnectorConfig or
    // SourceConnectorConfig) after them, the connector's own definition winning where both define a key.
    const base =
      desc.type === 'sink'
        ? sinkConnectorDef().keys()
        : desc.type === 'source'
          ? sourceConnectorDef().keys()
          : [];
    const names = new Set(own.map((k) => k.name));
    return [...own, ...base.filter((k) => !names.has(k.name))].map((k, i) => keyInfo(k, i));
  }
}

/** Kafka's 400 for a config its validation refused, listing every error. */
export function invalidConfigError(validation: ConfigInfos): RestError {
  const messages = validation.configs.flatMap((c) => c.value.errors);
  return new RestError(
    400,
    `Connector configuration is invalid and contains the following ${messages.length} error(s):\n${messages.join('\n')}\n` +
      'You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`',
  );
}

/**
 * The success message of an offsets request (Kafka's Worker.completeModifyOffsetsCallback): a connector whose
 * alterOffsets() answered false may keep offsets elsewhere too, which the response says were not changed.
 */
function offsetsModifiedMessage(connectorAnsweredTrue: boolean, isReset: boolean): string {
  const done = isReset ? 'reset' : 'altered';
  if (connectorAnsweredTrue) return `The offsets for this connector have been ${done} successfully`;
  return (
    `The Connect framework-managed offsets for this connector have been ${done} successfully. However, if this ` +
    `connector manages offsets externally, they will need to be manually ${done} in the system that the connector uses.`
  );
}

/**
 * A sink connector offset's partition, checked in the order and with the messages of Kafka's SinkUtils. As there,
 * "kafka_partition" may be a number or its text ("10" as well as 10).
 */
function sinkPartition(p: Record<string, unknown>): { topic: string; partition: number } {
  if (!('kafka_topic' in p) || !('kafka_partition' in p)) {
    throw new RestError(
      400,
      "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'",
    );
  }
  const topic = p.kafka_topic;
  if (topic === null || (typeof topic !== 'string' && typeof topic !== 'number'))
    throw new RestError(400, 'Kafka topic names must be valid strings and may not be null');
  if (p.kafka_partition === null)
    throw new RestError(400, 'Kafka partitions must be valid numbers and may not be null');
  const partition = integerOf(p.kafka_partition, INT32_MAX);
  if (partition === null) {
    throw new RestError(
      400,
      `Failed to parse the following Kafka partition value in the provided offsets: '${String(p.kafka_partition)}'. Partition values for sink connectors need to be integers.`,
    );
  }
  return { topic: String(topic), partition };
}

/** A sink connector offset (not null), as Kafka's SinkUtils reads it: "1000" as well as 1000. */
function sinkOffset(o: Record<string, unknown>): number {
  if (!('kafka_offset' in o)) {
    throw new RestError(
      400,
      "The offset for a sink connector should either be null or contain the key 'kafka_offset'",
    );
  }
  const offset = integerOf(o.kafka_offset, Number.MAX_SAFE_INTEGER);
  if (offset === null) {
    throw new RestError(
      400,
      `Failed to parse the following Kafka offset value in the provided offsets: '${String(o.kafka_offset)}'. Offset values for sink connectors need to be integers.`,
    );
  }
  return offset;
}

const INT32_MAX = 2 ** 31 - 1;

/** An integer given as a JSON number or as its decimal text (Java's parseInt/parseLong), or null. */
function integerOf(v: unknown, max: number): number | null {
  if (typeof v !== 'number' && typeof v !== 'string') return null;
  const text = String(v);
  if (!/^[+-]?\d+$/.test(text)) return null;
  const n = Number(text);
  return Math.abs(n) <= max ? n : null;
}

export function stateInfo(s: Status): { state: string; worker_id: string; trace?: string } {
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
