// The worker: builds and runs connector instances and task runners from configs, with the plugins, converters,
// transforms, error handlers and offset store they need. It keeps no connector state of its own beyond what it
// runs; the herder (standalone-herder.ts, and the distributed herder to come) decides what runs where.

import { Admin, Producer } from '../../client/index.js';
import { assert } from '../../common/assert.js';
import { settleWithin } from '../../common/deadline.js';
import type { Logger } from '../../common/logger.js';
import type { Connector, ConnectorContext, SinkTask, SourceTask, TaskConfig } from '../api/connector.js';
import type { SourceOffset, SourcePartition } from '../api/records.js';
import { stringifyJson } from '../converters/json-text.js';
import { ConfigException, ConnectException } from '../errors.js';
import {
  adminOverrides,
  clientSecurity,
  consumerOverrides,
  defaultApiTimeoutMs,
  producerOverrides,
  sameBootstrapServers,
  sinkGroupId,
  TASK_PRODUCER_DEFAULTS,
} from './client-configs.js';
import { makeConverter, makeTransformChain, splitList } from './connector-config.js';
import { ConnectorOffsetStore } from './connector-offset-store.js';
import type { LogClients } from './distributed/kafka-based-log.js';
import { ErrorHandler } from './error-handler.js';
import {
  type ExactlyOnceOptions,
  ExactlyOnceWorkerSourceTask,
  taskTransactionalId,
  transactionBoundary,
} from './exactly-once-source-task.js';
import { CONNECT_LOGGERS, type Loggers } from './loggers.js';
import { type OffsetStore, offsetKey } from './offset-store.js';
import type { Plugins } from './plugins.js';
import type { Status } from './status.js';
import type { WorkerConfig } from './worker-config.js';
import { WorkerSinkTask } from './worker-sink-task.js';
import { WorkerSourceTask } from './worker-source-task.js';
import type { TaskId, WorkerTask } from './worker-task.js';

export interface WorkerOptions {
  workerId: string;
  config: WorkerConfig;
  plugins: Plugins;
  offsets: OffsetStore;
  /** The loggers of everything this worker runs, with the levels /admin/loggers reads and sets (loggers.ts). */
  loggers: Loggers;
  /** Client settings every task client starts from (MirrorMaker passes the target cluster's TLS/SASL here). */
  clientOptions?: Record<string, unknown>;
  /**
   * The store of the offsets topic a source connector names in `offsets.storage.topic`, with the settings of its
   * `clients`, not opened yet: its start() creates the topic if missing, reads it to its end and follows it, its
   * stop() closes its clients; distributed mode only (standalone ignores the key, as Kafka's does).
   */
  openOffsetsTopic?: (topic: string, clients: LogClients) => StoppableOffsetStore;
}

type StoppableOffsetStore = OffsetStore & { start(): Promise<void>; stop(): Promise<void> };

export class Worker {
  /** The connector-level stores of connectors' own offsets topics (what the herder reads), by topic and connector. */
  private readonly offsetsTopics = new Map<
    string,
    { settings: string; store: Promise<StoppableOffsetStore> }
  >();

  /**
   * Settings of the worker's own clients (internal topics, group membership, fencing, admin): the clients'
   * settings given by the embedder, then the worker's unprefixed security.protocol, ssl.* and sasl.* keys.
   */
  readonly internalClientOptions: Record<string, unknown>;
  private readonly log: Logger;
  private readonly offsetStoreLog: Logger;

  constructor(readonly o: WorkerOptions) {
    this.internalClientOptions = { ...o.clientOptions, ...clientSecurity(o.config.raw) };
    this.log = o.loggers.logger(CONNECT_LOGGERS.worker);
    this.offsetStoreLog = o.loggers.logger(CONNECT_LOGGERS.connectorOffsetBackingStore);
  }

  get loggers(): Loggers {
    return this.o.loggers;
  }

  get workerId(): string {
    return this.o.workerId;
  }

  get plugins() {
    return this.o.plugins;
  }

  get offsets(): OffsetStore {
    return this.o.offsets;
  }

  /** A started connector instance. */
  async startConnector(config: Record<string, string>, context: ConnectorContext): Promise<Connector> {
    this.log.info(`Creating connector ${config.name ?? ''} of type ${config['connector.class']}`);
    const connector = this.o.plugins.newConnector(config['connector.class']!);
    // The connector logs through the worker's loggers (its class's name), which /admin/loggers filters.
    connector.initialize({ ...context, logger: (name) => this.o.loggers.logger(name) });
    // Config provider variables are resolved here, when the connector starts (KIP-297): stored configs keep them.
    await connector.start(this.o.config.transformer.transform(config));
    return connector;
  }

  connectorType(config: Readonly<Record<string, string>>): 'source' | 'sink' {
    return this.o.plugins.connector(config['connector.class'] ?? '').type as 'source' | 'sink';
  }

  /** Builds a task runner and starts it. */
  async startTask(
    id: TaskId,
    connectorConfig: Readonly<Record<string, string>>,
    taskConfig: TaskConfig,
    paused: boolean,
    onStatus: (id: TaskId, status: Status) => void,
    onTopicUsed: (topic: string) => void = () => {},
    /** Exactly-once source tasks: the herder's checks around the producer's initialization. */
    producerChecks: Pick<ExactlyOnceOptions, 'preProducerCheck' | 'postProducerCheck'> = {},
  ): Promise<WorkerTask> {
    this.log.info(`Creating task ${id.connector}-${id.task}`);
    connectorConfig = this.o.config.transformer.transform(connectorConfig);
    taskConfig = this.o.config.transformer.transform(taskConfig);
    const desc = this.o.plugins.connector(connectorConfig['connector.class']!);
    const connector = new desc.ctor() as Connector;
    const taskInstance = new (connector.taskClass())();
    const worker = this.o.config;
    const deps = {
      id,
      workerId: this.o.workerId,
      connectorConfig,
      taskConfig,
      keyConverter: makeConverter(this.o.plugins, 'key', connectorConfig, worker.raw),
      valueConverter: makeConverter(this.o.plugins, 'value', connectorConfig, worker.raw),
      transforms: makeTransformChain(this.o.plugins, connectorConfig),
      bootstrapServers: worker.bootstrapServers,
      // Only the client the task has takes the connector's overrides (and is judged by the override policy): a
      // source's consumer.override.* keys are not looked at, as in Kafka.
      producerOptions: {
        ...this.o.clientOptions,
        ...(desc.type === 'source' ? producerOverrides(worker.raw, connectorConfig) : {}),
      },
      consumerOptions: {
        ...this.o.clientOptions,
        ...(desc.type === 'sink' ? consumerOverrides(worker.raw, connectorConfig) : {}),
      },
      offsetFlushIntervalMs: worker.parsed['offset.flush.interval.ms'] as number,
      onStatus,
      // As Kafka's worker tasks: with topic.tracking.enable=false no topic is recorded.
      onTopicUsed: worker.parsed['topic.tracking.enable'] === true ? onTopicUsed : () => {},
      loggers: this.o.loggers,
      // Last, after every setting that can be refused: the error handler may open the task's DLQ producer,
      // which the task closes (WorkerSinkTask.close) only once it exists.
      errors: await this.errorHandler(id, connectorConfig, desc.type === 'sink'),
    };
    let task: WorkerTask;
    if (desc.type === 'source') {
      const offsets = await this.sourceOffsetStore(connectorConfig, id.task);
      try {
        task = this.sourceTask(deps, taskInstance as SourceTask, offsets, connectorConfig, producerChecks);
      } catch (err) {
        await offsets.release?.();
        throw err;
      }
    } else {
      const regex = (connectorConfig['topics.regex'] ?? '').trim();
      const topics = regex !== '' ? new RegExp(regex) : splitList(connectorConfig.topics);
      task = new WorkerSinkTask(deps, taskInstance as SinkTask, topics);
    }
    task.start(paused);
    return task;
  }

  /** A source task runner: exactly once (KIP-618) when the worker enables it, else at least once. */
  private sourceTask(
    deps: ConstructorParameters<typeof WorkerSourceTask>[0],
    taskInstance: SourceTask,
    offsets: OffsetStore,
    connectorConfig: Readonly<Record<string, string>>,
    producerChecks: Pick<ExactlyOnceOptions, 'preProducerCheck' | 'postProducerCheck'>,
  ): WorkerTask {
    if (!this.exactlyOnceSourceEnabled()) return new WorkerSourceTask(deps, taskInstance, offsets);
    const p = this.o.config.parsed;
    const own = this.ownOffsetsTopic(connectorConfig);
    // The global copy goes through the connector's store (sourceOffsetStore gave it the worker's store as fallback).
    assert(
      own?.withWorkerStore !== true ||
        (offsets instanceof ConnectorOffsetStore && offsets.secondary === this.o.offsets),
      "an exactly-once task beside the worker's offsets topic has the worker's store as its secondary",
    );
    return new ExactlyOnceWorkerSourceTask(deps, taskInstance, offsets, {
      transactionalId: taskTransactionalId(p['group.id'] as string, deps.id.connector, deps.id.task),
      ...transactionBoundary(connectorConfig, deps.offsetFlushIntervalMs),
      offsetsTopic: own?.topic ?? (p['offset.storage.topic'] as string),
      connectorStore: offsets instanceof ConnectorOffsetStore ? offsets : null,
      ...producerChecks,
    });
  }

  /**
   * A source connector's own offsets topic (`offsets.storage.topic`), or null for the worker's store alone. As
   * Kafka's Worker, a topic named explicitly is read and written by the connector's clients even when it is the
   * worker's offsets topic; then (sameOffsetTopicAsWorker: the same name, and the connector's producer has the
   * worker's bootstrap servers) it is the only store, else the worker's store is the fallback that gets a copy.
   * `config` is resolved (config provider variables replaced).
   */
  private ownOffsetsTopic(
    config: Readonly<Record<string, string>>,
  ): { topic: string; withWorkerStore: boolean } | null {
    const worker = this.o.config;
    const workerTopic = worker.parsed['offset.storage.topic'] as string;
    const producerServers = producerOverrides(worker.raw, config).bootstrapServers ?? worker.bootstrapServers;
    const sameCluster = sameBootstrapServers(producerServers, worker.bootstrapServers);
    let topic = (config['offsets.storage.topic'] ?? '').trim();
    // An exactly-once task writes its offsets in its producer's transactions, so with clients of its own: without a
    // topic named, a store of its own on the worker's offsets topic, on its producer's cluster (Kafka's
    // offsetStoreForExactlyOnceSourceTask/Connector: the worker's store alone is never used, so the connector's
    // consumer overrides apply).
    if (topic === '' && this.exactlyOnceSourceEnabled()) topic = workerTopic;
    if (topic === '') return null;
    return { topic, withWorkerStore: !(topic === workerTopic && sameCluster) };
  }

  /** KIP-618: `exactly.once.source.support=enabled` on a distributed worker. */
  exactlyOnceSourceEnabled(): boolean {
    const p = this.o.config.parsed;
    return p['group.id'] !== undefined && p['exactly.once.source.support'] === 'enabled';
  }

  /** A connector config with its config provider variables replaced (what the connector itself is given). */
  resolvedConfig(connectorConfig: Readonly<Record<string, string>>): Record<string, string> {
    return this.o.config.transformer.transform(connectorConfig);
  }

  /** The consumer group of a sink connector's tasks (client-configs.ts sinkGroupId), its config resolved. */
  sinkGroupId(name: string, connectorConfig: Readonly<Record<string, string>>): string {
    return sinkGroupId(name, this.o.config.raw, this.o.config.transformer.transform(connectorConfig));
  }

  /**
   * The offsets a source connector reads and writes: the worker's store, or, with `offsets.storage.topic`, that
   * topic first and the worker's store as the fallback (none when the topic is the worker's). As Kafka's Worker,
   * the connector's store (for the herder) and each task's are apart, their clients named
   * `connector-consumer-<connector>[-<task>]`,
   * `connector-producer-...` and `connector-adminclient-...`; a task's store is the task's, released when it closes.
   * Their settings are a task's clients' (Kafka's regularSourceOffsetsConsumerConfigs, baseProducerConfigs,
   * adminConfigs): the worker's `consumer.`, `producer.` and `admin.` keys (the admin's over the unprefixed ones),
   * then the connector's overrides as the policy allows them, a `client.id` among them replacing the name.
   */
  async sourceOffsetStore(
    connectorConfig: Readonly<Record<string, string>>,
    task?: number,
  ): Promise<OffsetStore> {
    const open = this.o.openOffsetsTopic;
    const named = (connectorConfig['offsets.storage.topic'] ?? '').trim() !== '';
    if (open === undefined || (!named && !this.exactlyOnceSourceEnabled())) return this.o.offsets;
    // A task's config was resolved when it started (startTask); the herder passes the stored one.
    const resolved =
      task === undefined ? this.o.config.transformer.transform(connectorConfig) : connectorConfig;
    const own = this.ownOffsetsTopic(resolved);
    if (own === null) return this.o.offsets;
    const fallback = own.withWorkerStore ? this.o.offsets : null;
    const owner = task === undefined ? (connectorConfig.name ?? '') : `${connectorConfig.name ?? ''}-${task}`;
    const worker = this.o.config.raw;
    // The consumer reads read_committed unless the settings say otherwise; under exactly-once, whatever they say
    // (Kafka's regularSourceOffsetsConsumerConfigs and exactlyOnceSourceOffsetsConsumerConfigs).
    // The embedder's settings first, as for the task clients (MirrorMaker's target cluster security).
    const consumer = {
      ...this.o.clientOptions,
      clientId: `connector-consumer-${owner}`,
      isolationLevel: 'read_committed',
      ...consumerOverrides(worker, resolved),
    };
    if (this.exactlyOnceSourceEnabled()) consumer.isolationLevel = 'read_committed';
    const clients: LogClients = {
      consumer,
      producer: {
        ...this.o.clientOptions,
        clientId: `connector-producer-${owner}`,
        ...producerOverrides(worker, resolved),
      },
      admin: {
        ...this.o.clientOptions,
        clientId: `connector-adminclient-${owner}`,
        ...adminOverrides(worker, resolved),
      },
    };
    const timeoutMs = defaultApiTimeoutMs(worker, resolved);
    if (task !== undefined) {
      // Opened by the task when it starts (its own loop, not the herder's), as Kafka's task starts its store.
      const store = open(own.topic, clients);
      return new ConnectorOffsetStore(
        store,
        fallback,
        this.offsetStoreLog,
        () => store.stop(),
        () => startWithin(store, own.topic, timeoutMs),
      );
    }
    const key = `${own.topic}\u0000${owner}`;
    // A connector reconfigured with other client settings gets clients with those (Kafka builds them per request).
    const settings = JSON.stringify(clients);
    let cached = this.offsetsTopics.get(key);
    if (cached !== undefined && cached.settings !== settings) {
      this.offsetsTopics.delete(key);
      void cached.store.then((s) => s.stop()).catch(() => {});
      cached = undefined;
    }
    if (cached === undefined) {
      const store = open(own.topic, clients);
      const opened = { settings, store: startWithin(store, own.topic, timeoutMs).then(() => store) };
      this.offsetsTopics.set(key, opened);
      opened.store.catch(() => {
        if (this.offsetsTopics.get(key) === opened) this.offsetsTopics.delete(key);
      });
      cached = opened;
    }
    return new ConnectorOffsetStore(await cached.store, fallback, this.offsetStoreLog);
  }

  /**
   * Writes an offsets change of a stopped source connector on a worker with exactly-once source support, as
   * Kafka's Worker.modifySourceConnectorOffsets does: the connector's offsets topic gets them in a transaction of
   * a producer holding the transactional id of the connector's task 0 (Kafka's exactlyOnceSourceTaskProducerConfigs),
   * whose initTransactions() fences any zombie still holding that id and aborts its open transaction, so nothing
   * it writes afterwards commits over the change. The global offsets topic gets its copy outside the transaction,
   * as Kafka's ConnectorOffsetBackingStore orders the two. `store` is the connector's (sourceOffsetStore).
   */
  async writeSourceOffsetsExactlyOnce(
    name: string,
    connectorConfig: Readonly<Record<string, string>>,
    store: OffsetStore,
    entries: { partition: SourcePartition; offset: SourceOffset | null }[],
  ): Promise<void> {
    assert(this.exactlyOnceSourceEnabled(), 'an exactly-once offsets write on a worker without exactly-once');
    assert(
      store instanceof ConnectorOffsetStore,
      'an exactly-once connector has an offsets store of its own',
    );
    const resolved = this.o.config.transformer.transform(connectorConfig);
    const own = this.ownOffsetsTopic(resolved);
    assert(own !== null, 'an exactly-once connector has an offsets topic of its own');
    const groupId = this.o.config.parsed['group.id'] as string;
    await store.writeWith(name, entries, async (all) => {
      // The producer's own bounds (max.block.ms, delivery.timeout.ms) hold here: a REST request waits on it.
      const producer = new Producer({
        bootstrapServers: this.o.config.bootstrapServers,
        clientId: `connector-producer-${name}-0`,
        ...this.o.clientOptions,
        ...producerOverrides(this.o.config.raw, resolved),
        acks: 'all',
        idempotent: true,
        transactionalId: taskTransactionalId(groupId, name, 0),
      });
      try {
        await producer.initTransactions();
        producer.beginTransaction();
        await producer.sendBatch(
          all.map((e) => ({
            topic: own.topic,
            key: Buffer.from(offsetKey(name, e.partition), 'utf8'),
            value: e.offset === null ? null : Buffer.from(stringifyJson(e.offset), 'utf8'),
          })),
        );
        await producer.commitTransaction();
      } finally {
        await producer.close().catch(() => {});
      }
      // The store follows the topic read_committed: read to its end, it holds what was just committed.
      await store.primary.refresh?.();
    });
  }

  private async errorHandler(
    id: TaskId,
    config: Readonly<Record<string, string>>,
    sink: boolean,
  ): Promise<ErrorHandler> {
    const tolerance = (config['errors.tolerance'] ?? 'none').trim().toLowerCase();
    if (tolerance !== 'none' && tolerance !== 'all')
      throw ConfigException.invalid(
        'errors.tolerance',
        tolerance,
        'String must be one of (case insensitive): NONE, ALL',
      );
    const dlqTopic = sink ? (config['errors.deadletterqueue.topic.name'] ?? '').trim() : '';
    let dlqProducer: Producer | null = null;
    if (dlqTopic !== '') {
      await this.createDeadLetterQueueTopic(
        dlqTopic,
        Number(config['errors.deadletterqueue.topic.replication.factor'] ?? 3),
        config,
      );
      dlqProducer = this.dlqProducer(id, config);
    }
    return new ErrorHandler({
      connector: id.connector,
      taskId: id.task,
      tolerance,
      logEnable: (config['errors.log.enable'] ?? 'false').trim().toLowerCase() === 'true',
      logIncludeMessages: (config['errors.log.include.messages'] ?? 'false').trim().toLowerCase() === 'true',
      retryTimeoutMs: Number(config['errors.retry.timeout'] ?? 0),
      retryDelayMaxMs: Number(config['errors.retry.delay.max.ms'] ?? 60_000),
      dlqTopic: dlqTopic === '' ? null : dlqTopic,
      dlqContextHeaders:
        (config['errors.deadletterqueue.context.headers.enable'] ?? 'false').trim().toLowerCase() === 'true',
      dlqProducer,
      log: this.o.loggers.logger(CONNECT_LOGGERS.logReporter),
      dlqLog: this.o.loggers.logger(CONNECT_LOGGERS.deadLetterQueueReporter),
    });
  }

  /**
   * The admin client the offsets endpoints read and alter a sink connector's group with, as Kafka's
   * Worker.sinkConnectorOffsets builds it (adminConfigs): named `connector-worker-adminclient-<name>`, the worker's
   * unprefixed keys, then `admin.`, then the connector's `admin.override.` keys as the policy allows them, so it
   * reaches the cluster and logs in as the connector's tasks' clients do. The caller closes it.
   */
  sinkOffsetsAdmin(name: string, connectorConfig: Readonly<Record<string, string>>): Admin {
    return new Admin({
      ...this.o.clientOptions,
      clientId: `connector-worker-adminclient-${name}`,
      bootstrapServers: this.o.config.bootstrapServers,
      ...adminOverrides(this.o.config.raw, this.o.config.transformer.transform(connectorConfig)),
    });
  }

  /**
   * A sink task's dead letter queue producer, the task's own (it closes it), built as Kafka's
   * Worker.sinkTaskReporters builds it: with the settings of a source task's producer, that is the worker's
   * `producer.` keys and then the connector's `producer.override.` ones (as the override policy allows them), so
   * a connector that logs in as its own principal (the Principal policy) writes its DLQ as that principal too.
   */
  private dlqProducer(id: TaskId, config: Readonly<Record<string, string>>): Producer {
    return new Producer({
      ...this.o.clientOptions,
      clientId: `connector-dlq-producer-${id.connector}-${id.task}`,
      ...TASK_PRODUCER_DEFAULTS,
      bootstrapServers: this.o.config.bootstrapServers,
      ...producerOverrides(this.o.config.raw, config),
    });
  }

  /**
   * Creates a sink task's dead letter queue topic unless it exists, as Kafka's DeadLetterQueueReporter.createAndSetup
   * does: one partition, errors.deadletterqueue.topic.replication.factor replicas as configured (Kafka's default of 3
   * fails on a cluster of fewer brokers: the user sets the factor, Connect does not guess it), with the admin
   * settings of the connector's tasks (adminOverrides). Any failure but "the topic exists" (another task created it
   * meanwhile) fails the task.
   */
  private async createDeadLetterQueueTopic(
    topic: string,
    replicationFactor: number,
    connectorConfig: Readonly<Record<string, string>>,
  ): Promise<void> {
    const admin = new Admin({
      ...this.o.clientOptions,
      // Kafka's Worker.sinkTaskReporters names this admin so, without the task id (the worker's and the
      // connector's client.id keys replace it).
      clientId: 'connector-dlq-adminclient-',
      bootstrapServers: this.o.config.bootstrapServers,
      ...adminOverrides(this.o.config.raw, connectorConfig),
    });
    try {
      if ((await admin.listTopics()).includes(topic)) return;
      this.log.error(`Topic ${topic} doesn't exist. Will attempt to create topic.`);
      const [created] = await admin.createTopics([{ topic, numPartitions: 1, replicationFactor }]);
      const error = created?.error ?? null;
      if (error !== null && error.type !== 'TOPIC_ALREADY_EXISTS') throw error;
    } catch (err) {
      throw new ConnectException(`Could not initialize dead letter queue with topic=${topic}`, {
        cause: err,
      });
    } finally {
      await admin.close();
    }
  }

  async close(): Promise<void> {
    for (const { store } of this.offsetsTopics.values()) await (await store.catch(() => null))?.stop();
    this.offsetsTopics.clear();
  }
}

/**
 * Starts a connector's offsets store within `timeoutMs` (its clients' default.api.timeout.ms: Kafka's store reads
 * its topic's partitions and end offsets with calls bounded by it). A store that fails or takes longer is stopped,
 * its clients closed, and the error names the topic.
 */
async function startWithin(store: StoppableOffsetStore, topic: string, timeoutMs: number): Promise<void> {
  const timeout = new ConnectException(`Timed out after ${timeoutMs} ms opening the offsets topic ${topic}`);
  try {
    await settleWithin(store.start(), timeoutMs, () => timeout);
  } catch (err) {
    // Whatever the start still does meets a stopped log.
    await store.stop().catch(() => {});
    if (err === timeout) throw err;
    throw new ConnectException(`Could not open the offsets topic ${topic}: ${(err as Error).message}`);
  }
}
