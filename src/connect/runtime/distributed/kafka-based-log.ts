// A topic read from its beginning and followed for as long as the worker runs, with a producer to append to it
// (Kafka Connect's KafkaBasedLog): the base of the config, offset and status stores of distributed mode.
//
// Lifecycle: start() creates the topic if it is missing (compacted, with the given partitions and replication
// factor), assigns every partition to a group-less consumer from the earliest offset and starts one loop that
// hands each record to onRecord in offset order per partition. readToEnd() resolves once every record that was
// in the topic when it was called has been handed over: the way a worker makes sure it has seen what others
// wrote (a config change, a dead worker's last offsets). stop() ends the loop and closes both clients.
//
// A log can also hold a fencable writer (the config topic's leader producer under KIP-618): a transactional
// producer claimed with claimWritePrivileges(), whose initTransactions() fences the previous holder of the same
// transactional.id. sendTransactional() writes a group of records in one transaction through it; a failure
// (PRODUCER_FENCED after another worker claimed the id) closes it, so the privileges must be claimed again.

import {
  Admin,
  Consumer,
  type ConsumerRecord,
  Producer,
  type ProducerOptions,
  type ProducerRecord,
  type TopicPartition,
} from '../../../client/index.js';
import { PRODUCER_TIMEOUT_MS_MAX } from '../../../client/producer-settings.js';
import { settleWithin } from '../../../common/deadline.js';
import type { Logger } from '../../../common/logger.js';
import { ConnectException } from '../../errors.js';
import type { ClientKind } from '../client-configs.js';
import { workerOriginalsOptions } from '../client-configs.js';
import { CONNECT_LOGGERS, type Loggers } from '../loggers.js';
import type { WorkerConfig } from '../worker-config.js';

export interface KafkaBasedLogOptions {
  topic: string;
  bootstrapServers: string;
  /** The client id of the log's consumer and producer (Kafka's stores give both the same one). */
  clientId: string;
  /** The client id of the admin that creates the topic (Kafka's worker shares one: `<base>shared-admin`). */
  adminClientId?: string;
  /**
   * Each client's own settings, client id included, over the log's defaults (names instead of `clientId` and
   * `adminClientId`): a connector's own offsets topic. They replace `clientOptions` (the worker's unprefixed
   * security keys), which Kafka's Worker gives to such a store's admin alone.
   */
  clients?: LogClients;
  partitions: number;
  replicationFactor: number;
  onRecord: (record: ConsumerRecord) => void;
  log: Logger;
  /**
   * Read only committed transactions whatever the settings say (the offsets and config topics under exactly-once
   * source, KIP-618). Otherwise the consumer reads at the isolation level its settings give, read_uncommitted by
   * default, as Kafka's stores leave the worker's `isolation.level` to their consumers.
   */
  readCommitted?: boolean;
  /** Settings every client of the log starts from (security.protocol, ssl.*, sasl.* as client options). */
  clientOptions?: Record<string, unknown>;
  /**
   * The worker config's own keys as each client's options, over `clientOptions` and the log's defaults and under
   * what the log and its store require (Kafka's stores start every client from the worker's originals).
   */
  workerClients?: Readonly<Record<ClientKind, Readonly<Record<string, unknown>>>>;
  /** Topic configs for creating the topic (KIP-605's `config.storage.<key>` keys); compaction always wins. */
  topicConfigs?: Readonly<Record<string, string>>;
  /** The store's own producer settings (Kafka's backing store's configure()), under `clients.producer`. */
  producerSettings?: Readonly<Partial<ProducerOptions>>;
}

/**
 * What Kafka's KafkaConfigBackingStore and KafkaOffsetBackingStore set on their producers: no idempotence
 * (Connect leaves it off for every producer, so that no IDEMPOTENT_WRITE is needed on older brokers) and a write
 * retried for as long as a retriable error lasts (delivery.timeout.ms Integer.MAX_VALUE), where the client's
 * default failed a config or offsets write after two minutes of a broker restart.
 */
export const CONFIG_AND_OFFSETS_STORE_PRODUCER = {
  idempotent: false,
  deliveryTimeoutMs: PRODUCER_TIMEOUT_MS_MAX,
} as const satisfies Partial<ProducerOptions>;

/**
 * KafkaStatusBackingStore's producer: no idempotence either, and no retries: the store sends a failed write again
 * itself, unless the status was superseded meanwhile (status-store.ts).
 */
export const STATUS_STORE_PRODUCER = {
  idempotent: false,
  retries: 0,
} as const satisfies Partial<ProducerOptions>;

/** The client ids of a log's consumer, producer and admin. */
/** Client options (as the Brook client takes them) of one client of a log, its client id among them. */
export type LogClientSettings = Readonly<Record<string, unknown>> & { readonly clientId: string };

export interface LogClients {
  consumer: LogClientSettings;
  producer: LogClientSettings;
  admin: LogClientSettings;
}

const POLL_TIMEOUT_MS = 200;
/** How long readToEnd() may take before it fails (Kafka's READ_TO_END_TIMEOUT_MS is 30 s as well). */
const READ_TO_END_TIMEOUT_MS = 30_000;
const TOPIC_METADATA_WAIT_MS = 30_000;

export class KafkaBasedLog {
  private consumer: Consumer | null = null;
  private producer: Producer | null = null;
  /** The transactional writer, while this log holds write privileges. */
  private fencable: Producer | null = null;
  /** The last transaction queued through the writer (each starts when the one before has ended). */
  private transactions: Promise<void> = Promise.resolve();
  private partitions: TopicPartition[] = [];
  /** Next offset to hand over, per partition. */
  private readonly positions = new Map<number, number>();
  private loop: Promise<void> | null = null;
  private started = false;
  private stopped = false;
  private waiters: Array<() => void> = [];
  /** Admin clients open while the log starts (topic creation, partition lookup). */
  private readonly admins = new Set<Admin>();

  constructor(private readonly o: KafkaBasedLogOptions) {}

  /**
   * Creates the topic if missing, opens the clients and reads the topic to its end. When it fails, or stop() is
   * called meanwhile (a task's store given up on after its time limit), every client it opened is closed. A log
   * starts once: a second start would replace the clients of the first, which stop() would then never close, and a
   * start after stop() would open clients that nothing closes; both are refused before anything is opened.
   */
  async start(): Promise<void> {
    if (this.started) throw new ConnectException(`The log of ${this.o.topic} was already started`);
    this.started = true;
    this.throwIfStopped();
    try {
      await this.openAndRead();
    } catch (err) {
      await this.stop();
      throw err;
    }
    if (this.stopped) throw new ConnectException(`The log of ${this.o.topic} was stopped`);
  }

  private async openAndRead(): Promise<void> {
    await this.ensureTopic();
    this.throwIfStopped();
    const consumer = new Consumer({
      ...this.baseOptions(),
      bootstrapServers: this.o.bootstrapServers,
      ...this.workerOptions('consumer'),
      ...this.forcedIsolation(),
      clientId: this.o.clientId,
      ...this.o.clients?.consumer,
      // The log reads every partition from its start by itself, whatever the settings say.
      autoOffsetReset: 'earliest',
      enableAutoCommit: false,
    });
    this.consumer = consumer;
    this.producer = new Producer({
      ...this.baseOptions(),
      bootstrapServers: this.o.bootstrapServers,
      lingerMs: 0,
      ...this.workerOptions('producer'),
      clientId: this.o.clientId,
      ...this.o.producerSettings,
      ...this.o.clients?.producer,
      // As Kafka's KafkaBasedLog, whatever the settings say: durable writes, and records of one key in order (a
      // status, then its successor) with one request in flight.
      acks: 'all',
      maxInFlightRequestsPerConnection: 1,
    });
    const admin = this.newAdmin();
    try {
      // A topic just created (by this worker or another) may take a moment to show its partitions.
      const deadline = Date.now() + TOPIC_METADATA_WAIT_MS;
      while (this.partitions.length === 0 && Date.now() < deadline && !this.stopped) {
        const [description] = await admin.describeTopics([this.o.topic]);
        this.partitions = (description?.partitions ?? []).map((p) => ({
          topic: this.o.topic,
          partition: p.partition,
        }));
        if (this.partitions.length === 0) await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      await this.closeAdmin(admin);
    }
    this.throwIfStopped();
    if (this.partitions.length === 0) throw new ConnectException(`Topic ${this.o.topic} has no partitions`);
    consumer.assign(this.partitions);
    for (const tp of this.partitions) this.positions.set(tp.partition, 0);
    // Lazy, as Kafka's: the loop's first poll finds the beginnings, and readToEnd() below waits for it, bounded.
    await consumer.seekToBeginning(this.partitions);
    this.throwIfStopped();
    this.loop = this.run();
    await this.readToEnd();
  }

  private throwIfStopped(): void {
    if (this.stopped) throw new ConnectException(`The log of ${this.o.topic} was stopped`);
  }

  /** What every client of the log starts from: `clientOptions`, unless `clients` sets each client up. */
  private baseOptions(): Record<string, unknown> {
    return this.o.clients === undefined ? { ...this.o.clientOptions } : {};
  }

  /**
   * read_committed when the log must read so, over the worker's `isolation.level`, with the warning of Kafka's
   * ConnectUtils.ensureProperty when the worker asked for another level; nothing otherwise.
   */
  private forcedIsolation(): { isolationLevel?: 'read_committed' } {
    if (this.o.readCommitted !== true) return {};
    const asked = this.workerOptions('consumer').isolationLevel;
    if (asked !== undefined && asked !== 'read_committed')
      this.o.log.warn(
        `The value '${String(asked)}' for the 'isolation.level' property will be ignored as it cannot be overridden ` +
          `for the ${this.o.topic} consumer when exactly-once source support is enabled. ` +
          `The value 'read_committed' will be used instead.`,
      );
    return { isolationLevel: 'read_committed' };
  }

  /** The worker's own settings for one client, unless `clients` sets each client up. */
  private workerOptions(kind: ClientKind): Readonly<Record<string, unknown>> {
    return this.o.clients === undefined ? (this.o.workerClients?.[kind] ?? {}) : {};
  }

  /** An admin client of the log's cluster, named as the log's clients are; stop() closes it if still open. */
  private newAdmin(): Admin {
    const admin = new Admin({
      ...this.baseOptions(),
      bootstrapServers: this.o.bootstrapServers,
      ...this.workerOptions('admin'),
      ...(this.o.adminClientId === undefined ? {} : { clientId: this.o.adminClientId }),
      ...this.o.clients?.admin,
    });
    this.admins.add(admin);
    return admin;
  }

  private async closeAdmin(admin: Admin): Promise<void> {
    this.admins.delete(admin);
    await admin.close();
  }

  private async ensureTopic(): Promise<void> {
    const admin = this.newAdmin();
    try {
      const existing = await admin.listTopics();
      if (existing.includes(this.o.topic)) return;
      const brokers = (await admin.describeCluster()).brokers.length;
      // Kafka's default of 3 on a smaller development cluster falls back to the broker default (-1).
      const rf = this.o.replicationFactor > brokers ? -1 : this.o.replicationFactor;
      const configs = { ...this.o.topicConfigs, 'cleanup.policy': 'compact' };
      const listed = Object.entries(configs)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ');
      this.o.log.info(`Creating topic ${this.o.topic} (${this.o.partitions} partitions, ${listed})`);
      const results = await admin.createTopics([
        { topic: this.o.topic, numPartitions: this.o.partitions, replicationFactor: rf, configs },
      ]);
      // TOPIC_ALREADY_EXISTS (36): another worker created it meanwhile.
      const failed = results.find((r) => r.error !== null && r.error.code !== 36);
      if (failed?.error)
        throw new ConnectException(`Could not create topic ${this.o.topic}: ${failed.error.message}`);
    } finally {
      await this.closeAdmin(admin);
    }
  }

  private async run(): Promise<void> {
    const consumer = this.consumer!;
    while (!this.stopped) {
      let records: ConsumerRecord[];
      try {
        records = await consumer.poll(POLL_TIMEOUT_MS);
      } catch (err) {
        if (this.stopped) return;
        this.o.log.warn(`Reading ${this.o.topic} failed, retrying: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      for (const r of records) {
        try {
          this.o.onRecord(r);
        } catch (err) {
          this.o.log.error(
            `Skipping a record of ${this.o.topic} at ${r.partition}/${r.offset}: ${(err as Error).message}`,
          );
        }
        this.positions.set(r.partition, r.offset + 1);
      }
      // Positions also move past offsets that hold no record (transaction markers, compacted gaps). Only positions
      // known now are read (no wait): one still being resolved would hold the loop, and stop() with it.
      for (const tp of this.partitions) {
        const p = await consumer.position(tp, 0).catch(() => null);
        if (p !== null && p > (this.positions.get(tp.partition) ?? 0)) this.positions.set(tp.partition, p);
      }
      for (const w of this.waiters.splice(0)) w();
    }
  }

  /** Resolves once everything written before the call has been handed to onRecord. */
  async readToEnd(): Promise<void> {
    const consumer = this.consumer;
    if (consumer === null) throw new ConnectException(`The log of ${this.o.topic} is not started`);
    const deadline = Date.now() + READ_TO_END_TIMEOUT_MS;
    const timedOut = (): ConnectException =>
      new ConnectException(`Timed out reading ${this.o.topic} to its end`);
    // The end offsets count against the same time limit: a broker that never answers them fails the call too.
    const ends = await settleWithin(consumer.endOffsets(this.partitions), READ_TO_END_TIMEOUT_MS, timedOut);
    for (;;) {
      const behind = ends.some((e) => (this.positions.get(e.partition) ?? 0) < e.offset);
      if (!behind) return;
      if (this.stopped) throw new ConnectException(`The log of ${this.o.topic} was stopped`);
      if (Date.now() > deadline) throw timedOut();
      await new Promise<void>((r) => {
        const t = setTimeout(r, POLL_TIMEOUT_MS * 2);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  /** Appends a record and resolves when the broker has it (acks=all). */
  async send(key: string, value: Buffer | null, partition?: number): Promise<void> {
    if (this.producer === null) throw new ConnectException(`The log of ${this.o.topic} is not started`);
    const record: ProducerRecord = { topic: this.o.topic, key: Buffer.from(key, 'utf8'), value };
    if (partition !== undefined) record.partition = partition;
    await this.producer.send(record);
  }

  /** Appends a record with a key given as bytes (the offset topic's keys). */
  async sendBytes(key: Buffer, value: Buffer | null): Promise<void> {
    if (this.producer === null) throw new ConnectException(`The log of ${this.o.topic} is not started`);
    await this.producer.send({ topic: this.o.topic, key, value });
  }

  /** Whether claimWritePrivileges() succeeded and no transactional write failed since. */
  hasWritePrivileges(): boolean {
    return this.fencable !== null;
  }

  /**
   * Opens the transactional writer for `transactionalId` and initializes it, which fences whoever held the id
   * before (its next transactional write fails with PRODUCER_FENCED) and aborts a transaction it left open.
   */
  async claimWritePrivileges(transactionalId: string): Promise<void> {
    await this.relinquishWritePrivileges();
    const producer = new Producer({
      ...this.o.clientOptions,
      ...this.workerOptions('producer'),
      bootstrapServers: this.o.bootstrapServers,
      clientId: `${this.o.clientId}-leader`,
      acks: 'all',
      lingerMs: 0,
      // As Kafka's KafkaConfigBackingStore.fencableProducerProps (from baseProducerProps): a config write is
      // retried for as long as a retriable error lasts, not failed after the client's default two minutes.
      deliveryTimeoutMs: PRODUCER_TIMEOUT_MS_MAX,
      transactionalId,
    });
    try {
      await producer.initTransactions();
    } catch (err) {
      await producer.close().catch(() => {});
      throw err;
    }
    this.fencable = producer;
  }

  async relinquishWritePrivileges(): Promise<void> {
    const producer = this.fencable;
    this.fencable = null;
    await producer?.close().catch(() => {});
  }

  /**
   * Writes the records in one transaction through the writer claimed with claimWritePrivileges(). On any failure
   * the writer is closed (a fenced producer cannot be used again) and the error is thrown.
   */
  sendTransactional(records: ReadonlyArray<{ key: string; value: Buffer | null }>): Promise<void> {
    // One transaction at a time: the herder's loop and REST requests write concurrently.
    const run = this.transactions.then(() => this.runTransaction(records));
    this.transactions = run.catch(() => {});
    return run;
  }

  private async runTransaction(records: ReadonlyArray<{ key: string; value: Buffer | null }>): Promise<void> {
    const producer = this.fencable;
    if (producer === null)
      throw new ConnectException('Cannot produce to config topic without claiming write privileges first');
    try {
      producer.beginTransaction();
      const sent = producer.sendBatch(
        records.map((r) => ({ topic: this.o.topic, key: Buffer.from(r.key, 'utf8'), value: r.value })),
      );
      // A record's failure also fails the commit; its own rejection is awaited below so that none is left unhandled.
      sent.catch(() => {});
      await producer.commitTransaction();
      await sent;
    } catch (err) {
      await this.relinquishWritePrivileges();
      throw err;
    }
  }

  /**
   * Ends the loop and closes the clients. `closeTimeoutMs` bounds the wait of each client's close for what it still
   * has in flight (records still retried are then failed); without it, the clients' default close timeouts.
   */
  async stop(closeTimeoutMs?: number): Promise<void> {
    this.stopped = true;
    await this.relinquishWritePrivileges();
    for (const w of this.waiters.splice(0)) w();
    await this.loop?.catch(() => {});
    await this.producer?.close(closeTimeoutMs).catch(() => {});
    await this.consumer?.close({ timeoutMs: closeTimeoutMs }).catch(() => {});
    for (const admin of this.admins) await this.closeAdmin(admin).catch(() => {});
    this.producer = null;
    this.consumer = null;
  }
}

/** Opens the log of one internal topic, handing its records to onRecord. */
export type LogOpener = (onRecord: (record: ConsumerRecord) => void) => KafkaBasedLog;

/**
 * What Kafka's ConnectUtils.clientIdBase makes of a worker config, the start of its internal clients' ids:
 * `<group.id>-` or `<group.id>-<client.id>-` (`connect-` when there is no group.id).
 */
export function clientIdBase(parsed: Readonly<Record<string, unknown>>): string {
  const groupId = (parsed['group.id'] as string | null | undefined) ?? 'connect';
  const clientId = ((parsed['client.id'] as string | null | undefined) ?? '').trim();
  return clientId === '' ? `${groupId}-` : `${groupId}-${parsed['client.id'] as string}-`;
}

/**
 * The logs of the worker's internal topics, all from the worker config: topic names, partitions, replication
 * factors, client ids and client settings in one place. As Kafka's KafkaConfigBackingStore,
 * KafkaStatusBackingStore and KafkaOffsetBackingStore, each store's consumer and producer are
 * `<clientIdBase>configs`, `statuses` or `offsets`, and the admin creating the topics is the worker's shared one,
 * `<clientIdBase>shared-admin` (ConnectDistributed). Every one of those clients starts from the worker config's own
 * keys (Kafka's `config.originals()`: `compression.type`, `request.timeout.ms`, `isolation.level`, the security
 * keys). With exactly.once.source.support=enabled the offsets and config topics are read read_committed whatever
 * the worker says, so that offsets and configs of an aborted transaction are never seen; the status topic, and
 * every topic under `preparing` or `disabled`, at the worker's isolation.level (KafkaOffsetBackingStore,
 * KafkaConfigBackingStore and KafkaStatusBackingStore configure()).
 */
export function internalTopicLogs(
  config: WorkerConfig,
  loggers: Loggers,
  clientOptions: Record<string, unknown> = {},
): {
  config: LogOpener;
  status: LogOpener;
  offsets: (topic?: string, clients?: LogClients) => LogOpener;
} {
  const p = config.parsed;
  const base = clientIdBase(p);
  const log = loggers.logger(CONNECT_LOGGERS.kafkaBasedLog);
  const workerClients = {
    producer: workerOriginalsOptions('producer', config.raw),
    consumer: workerOriginalsOptions('consumer', config.raw),
    admin: workerOriginalsOptions('admin', config.raw),
  };
  const settingsLog = loggers.logger(CONNECT_LOGGERS.distributedConfig);
  const open =
    (
      topic: string,
      partitions: number,
      rf: number,
      suffix: string,
      readCommitted: boolean,
      prefix: StoragePrefix,
      producerSettings: Readonly<Partial<ProducerOptions>>,
      clients?: LogClients,
    ): LogOpener =>
    (onRecord) =>
      new KafkaBasedLog({
        topic,
        bootstrapServers: config.bootstrapServers,
        clientId: `${base}${suffix}`,
        adminClientId: `${base}shared-admin`,
        clients,
        partitions,
        replicationFactor: rf,
        onRecord,
        log,
        readCommitted,
        clientOptions,
        workerClients,
        topicConfigs: storageTopicSettings(config.raw, prefix, settingsLog),
        producerSettings,
      });
  // As Kafka's DistributedConfig.exactlyOnceSourceEnabled(): `preparing` forces nothing.
  const exactlyOnceEnabled = p['exactly.once.source.support'] === 'enabled';
  return {
    // With exactly-once enabled the leader writes configs in transactions (a zombie leader's are aborted): as
    // Kafka, the config topic is then read read_committed.
    config: open(
      p['config.storage.topic'] as string,
      1,
      p['config.storage.replication.factor'] as number,
      'configs',
      exactlyOnceEnabled,
      'config.storage.',
      CONFIG_AND_OFFSETS_STORE_PRODUCER,
    ),
    status: open(
      p['status.storage.topic'] as string,
      p['status.storage.partitions'] as number,
      p['status.storage.replication.factor'] as number,
      'statuses',
      false,
      'status.storage.',
      STATUS_STORE_PRODUCER,
    ),
    // A connector's own offsets topic is made like the worker's (Kafka does the same), its clients set up by the
    // worker (Kafka's connector-specific offset store).
    offsets: (topic, clients) =>
      open(
        topic ?? (p['offset.storage.topic'] as string),
        p['offset.storage.partitions'] as number,
        p['offset.storage.replication.factor'] as number,
        topic === undefined ? 'offsets' : `offsets-${topic}`,
        exactlyOnceEnabled,
        'offset.storage.',
        CONFIG_AND_OFFSETS_STORE_PRODUCER,
        clients,
      ),
  };
}

type StoragePrefix = 'config.storage.' | 'offset.storage.' | 'status.storage.';

/** Worker keys under a storage prefix that are the runtime's own settings, not topic configs. */
const STORAGE_SETTINGS = new Set(['topic', 'replication.factor', 'partitions', 'file.filename']);

/**
 * KIP-605 (Kafka's DistributedConfig.topicSettings): every other `<prefix><key>` of the worker config is a topic
 * config for creating that internal topic (`config.storage.min.insync.replicas=2`). As in Kafka, cleanup.policy
 * is ignored with a warning (the topics must be compacted), and so is `config.storage.partitions` (the config
 * topic has one partition). `offset.storage.file.filename` is standalone's offsets file, never a topic config.
 */
export function storageTopicSettings(
  raw: Readonly<Record<string, string>>,
  prefix: StoragePrefix,
  log: Logger,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!key.startsWith(prefix)) continue;
    const name = key.slice(prefix.length);
    if (name === 'partitions' && prefix === 'config.storage.')
      log.warn(`Ignoring '${key}=${value}' setting, since config topic partitions is always 1`);
    else if (name === 'cleanup.policy')
      log.warn(`Ignoring '${key}=${value}' setting, since compaction is always used`);
    else if (name !== '' && !STORAGE_SETTINGS.has(name)) out[name] = value;
  }
  return out;
}
