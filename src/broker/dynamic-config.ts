// Dynamic configs in the coordination store, as Kafka keeps them in ZooKeeper: topic overrides under
// /config/topics/<t>, broker configs under /config/brokers/<id> and /config/brokers/<default>, and a sequential
// /config/changes/config_change_N notification after each write. Every broker watches the notifications and
// reloads the entity named, so a change made through any broker reaches all of them.
//
// Ownership: this module owns the watch and the last notification processed; it changes TopicConfigs and tells
// the replica manager, each change applied in one synchronous step after its reads.

import type { BrokerId } from '../common/ids.js';
import type { Logger } from '../common/logger.js';
import type { CoordinationStore } from '../controller/store/store.js';
import {
  brokerConfigPath,
  CONFIG_CHANGES_PATH,
  configChangeCreatePath,
  DEFAULT_BROKER_ENTITY,
  decodeConfigChange,
  decodeEntityConfig,
  encodeConfigChange,
  encodeEntityConfig,
  topicConfigPath,
} from '../controller/zk-layout/index.js';
import { ignoredStoredKeys } from './config/alter-validation.js';
import { brokerKey } from './config/broker-keys.js';
import { ConfigType } from './config/config-types.js';
import { decodePassword, encodePassword, passwordEncoderSettings } from './config/password-encoder.js';
import type { ReplicaManager } from './replica/replica-manager.js';
import type { TopicConfigs } from './topic-configs.js';

const CHANGE_PREFIX = 'config_change_';
/** First and largest pause before reading again an entity whose read failed: bounded, and cheap when it recovers. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 10_000;

/**
 * An entity's configs as a change reads them: the configs; or nothing applied, either because the store could not
 * answer (`retry`: read again after a pause) or because the stored document holds a value that is not a string,
 * which Kafka's ConfigEntityZNode.decode refuses by throwing: the change is dropped with an error in the log, and
 * the entity is read again at its next change notification.
 */
export type EntityRead =
  | { readonly ok: true; readonly configs: Map<string, string> }
  | { readonly ok: false; readonly retry: boolean };

/**
 * A config document read to be edited: its configs; or `unreadable` (the store could not answer), or `refused` (a
 * value that is not a string, which Kafka's ConfigEntityZNode.decode refuses by throwing).
 */
export type StoredConfig = Map<string, string> | 'unreadable' | 'refused';

interface DynamicBrokerLayers {
  readonly dynamicBroker: Map<string, string>;
  readonly dynamicDefault: Map<string, string>;
}

/**
 * Another owner of /config entities (client quotas under users/ and clients/): told to load everything when
 * watching starts (again, after a new session), and of each change notification for an entity type it serves.
 */
export interface ConfigEntityListener {
  readonly entityTypes: readonly string[];
  /** False when the entities could not be read: nothing changed, and DynamicConfig tries again later. */
  reloadAll(): Promise<boolean>;
  /**
   * False when the entity could not be read: nothing changed, and DynamicConfig tries again later. True when it
   * was applied, or when its document was refused (see EntityRead) and waits for its next change.
   */
  changed(entityPath: string): Promise<boolean>;
}

export class DynamicConfig {
  /** The sequence number of the last notification applied; -1 before the first (they start at 0). */
  private lastSeen = -1;
  /** Whether the notifications present at start were skipped as history. */
  private primed = false;
  private stopped = false;
  private readonly listeners: ConfigEntityListener[] = [];
  /** Entities (as notifications name them) whose change could not be read yet: applied again until one read works. */
  private readonly unapplied = new Set<string>();
  /** Listeners whose full reload failed: it is tried again, as a change is, until one works. */
  private readonly unloaded = new Set<ConfigEntityListener>();
  /** Whether the last look at /config/changes failed: only then does a retry list the notifications again. */
  private changesUnread = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryDelayMs = RETRY_FIRST_MS;

  constructor(
    private readonly store: CoordinationStore,
    private readonly brokerId: number,
    private readonly topicConfigs: TopicConfigs,
    /** Null only for the read before the logs are loaded (loadBeforeLogs), which changes no replica. */
    private readonly replicas: ReplicaManager | null,
    private readonly logger: Logger,
    /** Called after the dynamic broker layers were (re)loaded: broker-level settings read outside topics. */
    private readonly onBrokerLayers: () => void = () => {},
    /** Called after a topic's overrides changed (the topic's config is read with them already). */
    private readonly onTopicOverrides: (topic: string) => void = () => {},
  ) {}

  /** Adds an owner of other entity types; call before start(). */
  addListener(listener: ConfigEntityListener): void {
    this.listeners.push(listener);
  }

  /** Loads the dynamic broker layers and starts watching for changes. */
  async start(): Promise<void> {
    if (!(await this.reloadBrokerLayers())) this.applyLater(`brokers/${this.brokerId}`);
    for (const l of this.listeners) if (!(await l.reloadAll())) this.reloadLater(l);
    await this.processChanges();
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  /**
   * An entity's configs: none for a missing node (as Kafka's getEntityConfigs answers NONODE), null when the store
   * cannot tell (unreachable, session expired, no permission). A caller keeps what it has on null: an empty map
   * would reset a topic kept forever to the 7-day default, or a compacted one to delete.
   */
  async readEntity(path: string): Promise<Map<string, string> | null> {
    const read = await this.readEntityForChange(path);
    return read.ok ? read.configs : null;
  }

  /** As readEntity, saying too whether a failed read is worth another try (see EntityRead). */
  async readEntityForChange(path: string): Promise<EntityRead> {
    const node = await this.store.get(path);
    if (!node.ok && node.code === 'NONODE') return { ok: true, configs: new Map() };
    if (!node.ok) {
      this.logger.warn(`reading the config at ${path} failed (${node.code}): keeping the current values`);
      return { ok: false, retry: true };
    }
    const config = entityConfigOf(node.value.data);
    if (!(config instanceof Error)) return { ok: true, configs: config };
    this.logger.error(`refusing the config at ${path} (${config.message}): keeping the current values`);
    return { ok: false, retry: false };
  }

  /**
   * A topic's overrides as the store holds them now. IncrementalAlterConfigs edits these, as Kafka's ZkAdminManager
   * edits what it reads from ZooKeeper: the overrides that notifications have brought so far miss a change just
   * made through another broker, and editing them would write that change away.
   */
  storedTopicConfig(topic: string): Promise<StoredConfig> {
    return this.readStored(topicConfigPath(topic));
  }

  /** As storedTopicConfig, for this broker's (perBroker) or the cluster default's layer; passwords decoded. */
  async storedBrokerConfig(perBroker: boolean): Promise<StoredConfig> {
    const stored = await this.readStored(
      brokerConfigPath(perBroker ? (this.brokerId as BrokerId) : DEFAULT_BROKER_ENTITY),
    );
    return stored instanceof Map ? this.passwords(stored, 'decode') : stored;
  }

  /**
   * The document decoded as Kafka's fetchEntityConfig decodes it (ConfigEntityZNode.decode): data that is not a
   * JSON object holds no configs, so the edit writes over it, as Kafka's does; a value that is not a string is
   * refused, as decode throws there.
   */
  private async readStored(path: string): Promise<StoredConfig> {
    const node = await this.store.get(path);
    if (!node.ok) return node.code === 'NONODE' ? new Map() : 'unreadable';
    const config = entityConfigOf(node.value.data);
    if (!(config instanceof Error)) return config;
    this.logger.error(`refusing to edit the config at ${path}: ${config.message}`);
    return 'refused';
  }

  /** Writes a topic's complete overrides and notifies every broker. Returns false when the store refused. */
  writeTopicConfig(topic: string, configs: ReadonlyMap<string, string>): Promise<boolean> {
    return this.writeEntity(topicConfigPath(topic), `topics/${topic}`, configs);
  }

  /** Writes this broker's (perBroker) or the cluster-wide default dynamic broker configs. */
  writeBrokerConfig(perBroker: boolean, configs: ReadonlyMap<string, string>): Promise<boolean> {
    const entity = perBroker ? String(this.brokerId) : DEFAULT_BROKER_ENTITY;
    return this.writeEntity(
      brokerConfigPath(perBroker ? (this.brokerId as BrokerId) : DEFAULT_BROKER_ENTITY),
      `brokers/${entity}`,
      this.passwords(configs, 'encode'),
    );
  }

  /** This broker's and the cluster default's dynamic layers from their stored keys: passwords decoded. */
  private brokerLayersOf(
    perBroker: Map<string, string>,
    clusterDefault: Map<string, string>,
  ): DynamicBrokerLayers {
    return {
      dynamicBroker: this.passwords(this.withoutIgnored(perBroker, true), 'decode'),
      dynamicDefault: this.passwords(this.withoutIgnored(clusterDefault, false), 'decode'),
    };
  }

  /**
   * The dynamic broker layers read once before the logs are loaded, into `topicConfigs` only (no replica manager
   * exists yet), as Kafka's KafkaServer initializes DynamicBrokerConfig before it creates the LogManager: loading
   * and recovery read max.message.bytes, the index sizes and log.preallocate. As there (getEntityConfigs), a read
   * that fails other than for a missing node fails the start. start() reads them again and watches for changes:
   * watching begins by taking the notifications present as history, so a change made between the two reads (during
   * log recovery, say) would otherwise be lost. Kafka reads them twice as well (DynamicBrokerConfig.initialize,
   * then ZkConfigManager.startup's fetchAllEntityConfigs of every broker entity).
   */
  static async loadBeforeLogs(
    store: CoordinationStore,
    brokerId: number,
    topicConfigs: TopicConfigs,
    logger: Logger,
  ): Promise<void> {
    const reader = new DynamicConfig(store, brokerId, topicConfigs, null, logger);
    const read = async (path: string): Promise<Map<string, string>> => {
      const node = await store.get(path);
      if (!node.ok && node.code === 'NONODE') return new Map();
      if (!node.ok) throw new Error(`reading the dynamic broker configs at ${path} failed: ${node.code}`);
      // As Kafka's DynamicBrokerConfig.initialize, whose decode throws: a value that is not a string fails the start.
      const config = entityConfigOf(node.value.data);
      if (config instanceof Error)
        throw new Error(`the dynamic broker configs at ${path}: ${config.message}`);
      return config;
    };
    const perBroker = await read(brokerConfigPath(brokerId as BrokerId));
    const clusterDefault = await read(brokerConfigPath(DEFAULT_BROKER_ENTITY));
    topicConfigs.setLayers({ ...topicConfigs.layers, ...reader.brokerLayersOf(perBroker, clusterDefault) });
  }

  /**
   * A stored layer without the keys Kafka's DynamicBrokerConfig.fromPersistentProps ignores, with its error in the
   * log: keys that cannot change dynamically, key store settings without a listener prefix and, in the cluster
   * default, per-broker keys (written by an older release or by hand). They stay stored: an
   * IncrementalAlterConfigs of that resource is refused until it deletes them, as in Kafka.
   */
  private withoutIgnored(configs: Map<string, string>, perBroker: boolean): Map<string, string> {
    for (const { names, message } of ignoredStoredKeys([...configs.keys()], perBroker)) {
      this.logger.error(`${message}: ${names.join(', ')}`);
      for (const name of names) configs.delete(name);
    }
    return configs;
  }

  /**
   * Password configs (sasl.jaas.config and the like) are stored encrypted with password.encoder.secret and held
   * decrypted in the layers, as Kafka does in ZooKeeper mode. A value that does not decode (another secret) is
   * left out with a log line. Validation refuses password configs when there is no secret.
   */
  private passwords(
    configs: ReadonlyMap<string, string>,
    direction: 'encode' | 'decode',
  ): Map<string, string> {
    const out = new Map(configs);
    const settings = passwordEncoderSettings(this.topicConfigs.layers.staticConfig);
    for (const [name, value] of configs) {
      if (brokerKey(name)?.type !== ConfigType.PASSWORD) continue;
      try {
        if (settings === null) throw new Error('password.encoder.secret is not set');
        out.set(
          name,
          direction === 'encode' ? encodePassword(settings, value) : decodePassword(settings.secret, value),
        );
      } catch (err) {
        if (direction === 'encode') throw err;
        this.logger.error(
          `dynamic password config ${name} could not be decoded, ignoring it: ${(err as Error).message}`,
        );
        out.delete(name);
      }
    }
    return out;
  }

  /** Writes any entity's complete configs at `path` and notifies every broker with `entityPath`. */
  writeEntityConfig(
    path: string,
    entityPath: string,
    configs: ReadonlyMap<string, string>,
  ): Promise<boolean> {
    return this.writeEntity(path, entityPath, configs);
  }

  private async writeEntity(
    path: string,
    entityPath: string,
    configs: ReadonlyMap<string, string>,
  ): Promise<boolean> {
    const data = encodeEntityConfig(Object.fromEntries(configs));
    const exists = await this.store.exists(path);
    if (!exists.ok) return false;
    const write =
      exists.value === null
        ? ({ op: 'create', path, data, mode: 'persistent' } as const)
        : ({ op: 'set', path, data, version: exists.value.version } as const);
    const result = await this.store.multi([
      write,
      {
        op: 'create',
        path: configChangeCreatePath(),
        data: encodeConfigChange({ entityPath }),
        mode: 'persistent_sequential',
      },
    ]);
    if (!result.ok) return false;
    // Apply here at once too, so the request that made the change sees it in its answer.
    if (!(await this.apply(entityPath))) this.applyLater(entityPath);
    return true;
  }

  private async processChanges(): Promise<void> {
    if (this.stopped) return;
    const again = () => {
      this.processChanges().catch((err: unknown) => this.logger.error(`config changes: ${String(err)}`));
    };
    const children = await this.store.children(CONFIG_CHANGES_PATH, again);
    if (!children.ok && children.code !== 'NONODE') {
      // No watch is set: without another try, no change would be seen until the next session.
      this.logger.warn(`reading ${CONFIG_CHANGES_PATH} failed (${children.code}): trying again`);
      this.changesUnread = true;
      this.scheduleRetry();
      return;
    }
    this.changesUnread = false;
    if (!children.ok) {
      // Not created yet (a fresh cluster): every notification that will appear is news. Watch for the node.
      this.primed = true;
      const exists = await this.store.exists(CONFIG_CHANGES_PATH, again);
      if (exists.ok && exists.value !== null) again();
      return;
    }
    const fresh = children.value
      .filter((name) => name.startsWith(CHANGE_PREFIX))
      .map((name) => ({ name, seq: Number(name.slice(CHANGE_PREFIX.length)) }))
      .filter((c) => Number.isSafeInteger(c.seq) && c.seq > this.lastSeen)
      .sort((a, b) => a.seq - b.seq);
    // On start, notifications older than now are history: the current values were just read.
    if (!this.primed) {
      this.primed = true;
      if (fresh.length > 0) this.lastSeen = fresh[fresh.length - 1]!.seq;
      return;
    }
    for (const change of fresh) {
      const node = await this.store.get(`${CONFIG_CHANGES_PATH}/${change.name}`);
      if (!node.ok && node.code !== 'NONODE') {
        // As Kafka's ZkNodeChangeNotificationListener: the last change processed stays before this one, which is
        // read again, with the ones after it, on the next try.
        this.logger.warn(`reading config change ${change.name} failed (${node.code}): trying again`);
        this.changesUnread = true;
        this.scheduleRetry();
        return;
      }
      this.lastSeen = change.seq;
      if (!node.ok) continue; // purged meanwhile: the entity's current values were read by a later change or start
      const decoded = decodeConfigChange(node.value.data);
      if (decoded.ok && !(await this.apply(decoded.value.entityPath)))
        this.applyLater(decoded.value.entityPath);
    }
  }

  /** Remembers a change whose entity could not be read, to apply it again after a pause (growing, bounded). */
  private applyLater(entityPath: string): void {
    this.unapplied.add(entityPath);
    this.scheduleRetry();
  }

  /**
   * Remembers a listener whose full reload failed, to reload it again after a pause. Kafka's ZkConfigManager.startup
   * reads every entity through KafkaZkClient, which waits out a lost connection (another failure there stops its
   * start). Here the reload also runs after a new session, where nothing can stop: the broker keeps serving with
   * the quotas it has, and without another try they would stay stale until the next session or restart.
   */
  private reloadLater(listener: ConfigEntityListener): void {
    this.unloaded.add(listener);
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retryTimer !== null) return;
    const delayMs = this.retryDelayMs;
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, RETRY_MAX_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.retry().catch((err: unknown) => this.logger.error(`config changes: ${String(err)}`));
    }, delayMs);
    this.retryTimer.unref();
  }

  /** Tries again what failed, and only that: an entity's read does not list the notifications again. */
  private async retry(): Promise<void> {
    if (this.stopped) return;
    for (const entityPath of [...this.unapplied]) {
      if (await this.apply(entityPath)) this.unapplied.delete(entityPath);
    }
    for (const listener of [...this.unloaded]) {
      if (await listener.reloadAll()) this.unloaded.delete(listener);
    }
    if (this.changesUnread) await this.processChanges();
    if (this.unapplied.size > 0 || this.unloaded.size > 0) this.scheduleRetry();
    else if (this.retryTimer === null) this.retryDelayMs = RETRY_FIRST_MS;
  }

  /** Applies the entity's stored configs; false when they could not be read, with nothing changed. */
  private async apply(entityPath: string): Promise<boolean> {
    const slash = entityPath.indexOf('/');
    const type = entityPath.slice(0, slash);
    const name = entityPath.slice(slash + 1);
    if (type === 'topics') {
      const read = await this.readEntityForChange(topicConfigPath(name));
      if (!read.ok) return !read.retry;
      this.topicConfigs.setOverrides(name, read.configs);
      this.replicas?.refreshSettings(name);
      this.onTopicOverrides(name);
      return true;
    }
    if (type === 'brokers') return this.reloadBrokerLayers();
    let applied = true;
    for (const l of this.listeners) {
      if (l.entityTypes.includes(type) && !(await l.changed(entityPath))) applied = false;
    }
    return applied;
  }

  /**
   * Reads both dynamic broker layers again; false when either could not be read (to be tried again), with both left
   * as they were. A layer whose document is refused (see EntityRead) leaves both as they were too, until its next
   * change.
   */
  private async reloadBrokerLayers(): Promise<boolean> {
    const perBroker = await this.readEntityForChange(brokerConfigPath(this.brokerId as BrokerId));
    const clusterDefault = await this.readEntityForChange(brokerConfigPath(DEFAULT_BROKER_ENTITY));
    if (!perBroker.ok || !clusterDefault.ok)
      return ![perBroker, clusterDefault].some((r) => !r.ok && r.retry);
    this.topicConfigs.setLayers({
      ...this.topicConfigs.layers,
      ...this.brokerLayersOf(perBroker.configs, clusterDefault.configs),
    });
    this.replicas?.refreshAllSettings();
    try {
      this.onBrokerLayers();
    } catch (err) {
      // The layers were validated when written; one that no longer resolves must not stop config processing.
      this.logger.warn(`dynamic broker config not applied: ${String(err)}`);
    }
    return true;
  }
}

/** A config node's data as keys and values, as a Kafka broker reads it (empty data: none), or why it is refused. */
function entityConfigOf(data: Uint8Array): Map<string, string> | Error {
  if (data.length === 0) return new Map();
  const decoded = decodeEntityConfig(data);
  return decoded.ok ? new Map(Object.entries(decoded.value)) : decoded.error;
}
