// The Broker: wires storage, the coordination store, the controller, the network layer and the request handlers,
// and runs their lifecycle.
//
// Start-up, one method per phase (runStart): encryption key stores (openKeyStores) -> metrics endpoint (when
// brook.metrics.listener is set) -> coordination store (in-process under the first log dir for a single node, or
// ZooKeeper when zookeeper.connect is set) -> cluster id, the config overrides of the topics with logs on disk, the
// dynamic broker configs and log manager with recovery (loadLogs) -> listeners bound (bindListeners) -> broker registration
// (registerInCluster) -> replica manager, dynamic configs, quotas, replica fetchers (startReplication) -> controller
// (createController) -> request handlers' services (createServices) -> serving and controller election (serve; the
// controller sends this broker LeaderAndIsr and UpdateMetadata, directly on one node). src/broker/README.md gives the
// same order.
// Shutdown (SIGTERM): stop accepting, finish in-flight requests, complete waiting produces and fetches, stop the
// controller, close the logs with a clean-shutdown marker, close the store session.

import { join } from 'node:path';
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import type { Clock } from '../common/clock.js';
import { FramePool } from '../common/frame-pool.js';
import type { BrokerId } from '../common/ids.js';
import type { LogLevels } from '../common/log-levels.js';
import { createLogger, type Logger, type LogLevel, runtimeLogLevels } from '../common/logger.js';
import { brokerConsoleClient } from '../console/broker-console.js';
import { WebConsole } from '../console/web-console.js';
import {
  readClusterId,
  registerBroker,
  updateBrokerRegistration,
} from '../controller/broker-registration.js';
import type { BrokerChannel } from '../controller/channel.js';
import { Controller } from '../controller/controller.js';
import { writeLogDirFailureEvent } from '../controller/log-dir-events.js';
import { InProcessStore } from '../controller/store/in-process-store.js';
import type { CoordinationStore } from '../controller/store/store.js';
import type { ZooKeeperSaslExchange } from '../controller/store/zookeeper-sasl.js';
import { connectZooKeeper } from '../controller/store/zookeeper-store.js';
import { TopicAdmin } from '../controller/topic-admin.js';
import { type BrokerEndpoint, type BrokerRegistration, brokerPath } from '../controller/zk-layout/index.js';
import { GroupCoordinator } from '../coordinator/group/group-coordinator.js';
import { partitionGroupStorage } from '../coordinator/group/group-storage.js';
import { MetricsEndpoint } from '../metrics/metrics-endpoint.js';
import { parseMetricsListener } from '../metrics/metrics-listener.js';
import { NotReadyError, type RequestHandler } from '../network/request.js';
import { RAW_SASL_TOKEN_API_KEY } from '../network/security.js';
import { SocketServer } from '../network/socket-server.js';
import { ErrorCode } from '../protocol/errors.js';
import { ApiKey } from '../protocol/registry.js';
import { AUDIT_LOGGER_NAME, AuditLog } from '../security/authorizer/audit-log.js';
import { AclAuthorizer, parseSuperUsers } from '../security/authorizer/authorizer.js';
import { CertificateReloader } from '../security/certificate-reload.js';
import {
  DelegationTokenManager,
  delegationTokenSettings,
} from '../security/delegation-token/token-manager.js';
import { DynamicListeners } from '../security/dynamic-listeners.js';
import {
  type InterBrokerSecurity,
  interBrokerSecurity,
  PLAINTEXT_INTER_BROKER,
} from '../security/inter-broker.js';
import { securedListeners } from '../security/listeners.js';
import {
  rawSaslToken,
  refusedDuringAuthentication,
  refuseRequest,
  SaslAuthenticator,
} from '../security/sasl/authenticator.js';
import { digestExchanges, zooKeeperSaslLogin } from '../security/zookeeper-sasl.js';
import { zooKeeperSecureAcls } from '../security/zookeeper-secure-acls.js';
import { zooKeeperClientTls } from '../security/zookeeper-tls.js';
import {
  type EncryptionSettings,
  KeyRotation,
  openKeyStore,
} from '../storage/encryption/encryption-setup.js';
import type { KeyStore } from '../storage/encryption/key-store.js';
import type { LogConfig } from '../storage/log-config.js';
import { LogDirs, topicsOnDisk } from '../storage/log-dirs.js';
import { type BrokerServices, completeDelayedRequests } from './broker-services.js';
import { ControllerRequests } from './cluster/controller-requests.js';
import { InterBrokerConnection } from './cluster/inter-broker-connection.js';
import { IsrManager } from './cluster/isr-manager.js';
import { PropagationWaiter } from './cluster/propagation-waiter.js';
import { RenewableSession } from './cluster/renewable-session.js';
import { ReplicaFetchers } from './cluster/replica-fetchers.js';
import { WireChannel } from './cluster/wire-channel.js';
import type { BrokerConfig } from './config/broker-config.js';
import { staticOnly } from './config/config-layers.js';
import { connectionLimitsOf, toNetworkOptions } from './config/network-config.js';
import {
  cleanerConfigOf,
  groupCommitOf,
  toLogManagerConfig,
  toStorageLogConfig,
} from './config/storage-log-config.js';
import { DynamicConfig } from './dynamic-config.js';
import { FetchSessionCache } from './fetch-session-cache.js';
import { advertisedApiVersions } from './handlers/18-api-versions.js';
import { HANDLERS } from './handlers/index.js';
import { closeTxnVerification } from './handlers/produce-txn-verification.js';
import { MetadataCache } from './metadata/metadata-cache.js';
import { notReadyHandler } from './not-ready.js';
import { ProducerIdManager } from './producer-id-manager.js';
import { Purgatory } from './purgatory.js';
import { ClientQuotaStore } from './quota/client-quota-store.js';
import { ClientQuotas } from './quota/client-quotas.js';
import { ConnectionCreationRates } from './quota/connection-creation-rate.js';
import { IpConnectionQuotas } from './quota/ip-quotas.js';
import { ReplicationQuota } from './quota/replication-quota.js';
import { LeadershipConfirmations } from './replica/leadership-confirmations.js';
import { LogDirMover } from './replica/log-dir-mover.js';
import { ReplicaManager } from './replica/replica-manager.js';
import { internalTopicAppender } from './replica/replicated-append.js';
import { createRequestDispatcher } from './request-dispatcher.js';
import type { RequestInterception } from './request-interceptor.js';
import { StartReads } from './start-reads.js';
import { readTopicOverrides } from './stored-topic-configs.js';
import { TopicConfigs } from './topic-configs.js';
import { createTransactionCoordinator, type TransactionWiring } from './txn/transaction-wiring.js';
import { markerWriter } from './txn/txn-markers.js';
import { ensureZooKeeperChroot } from './zookeeper-chroot.js';
import { ZooKeeperConsumerOffsets } from './zookeeper-consumer-offsets.js';

/** Bounds on parked requests; beyond them new waiters complete at once (see purgatory.ts). */
const PRODUCE_PURGATORY_MAX = 10_000;
const FETCH_PURGATORY_MAX = 10_000;
/** min.incremental.fetch.session.eviction.ms */
const FETCH_SESSION_EVICTION_MS = 120_000;
/** Kafka's default zookeeper.session.timeout.ms for the embedded store's session. */
const EMBEDDED_SESSION_TIMEOUT_MS = 18_000;
const METADATA_DIR = '__brook_metadata';
/** Read at each election and watched for changes: a dynamic cluster-wide key in Kafka. */
const UNCLEAN_KEY = 'unclean.leader.election.enable';
const REGISTRATION_RETRY_MS = 500;
/** Attempts to write a log dir failure event (every REGISTRATION_RETRY_MS): a minute of store trouble. */
const LOG_DIR_EVENT_ATTEMPTS = 120;
/** controller.socket.timeout.ms (Kafka's default) bounds each ControlledShutdown request. */
const CONTROLLED_SHUTDOWN_TIMEOUT_MS = 30_000;
const OFFSETS_TOPIC = '__consumer_offsets';
/** How often the group coordinator checks its deadlines (sessions, rebalances, offset expiry). */
const GROUP_TICK_MS = 100;

export interface BrokerOptions {
  readonly config: BrokerConfig;
  readonly staticConfig: ReadonlyMap<string, string>;
  readonly clock: Clock;
  readonly logger: Logger;
  /**
   * A logger of its own name and level, beside `logger`: the authorization log is Kafka's
   * kafka.authorizer.logger, whatever the broker's own logger is called. `brook server` passes createLogger;
   * without it (embedded brokers, tests) the authorization log is a child of `logger`, except at DEBUG.
   */
  readonly namedLogger?: (name: string, level: LogLevel) => Logger;
  /**
   * The run-time levels that `logger` and namedLogger's loggers obey, which DescribeConfigs and
   * IncrementalAlterConfigs on BROKER_LOGGER resources read and change (KIP-412, broker-loggers.ts). `brook server`
   * passes them; without them (embedded brokers, tests with their own logger), the broker keeps levels of its own
   * that its logger does not read.
   */
  readonly logLevels?: LogLevels;
  /**
   * Called once when the log directory has failed (a write to a log failed, so the log refuses appends for good):
   * `brook server` halts the process there, as Kafka halts a broker whose last log directory went offline. An
   * embedded broker without it only logs the failure.
   */
  readonly onLogDirFailure?: (err: Error) => void;
  /**
   * Lets a test delay, drop, answer or rewrite requests inside this broker (request-interceptor.ts); `brook server`
   * never sets it.
   */
  readonly requestInterception?: RequestInterception;
}

/** What loadLogs leaves for the later phases. */
interface LoadedStorage {
  readonly clusterId: string;
  readonly topicConfigs: TopicConfigs;
  readonly framePool: FramePool;
  /** A topic's storage settings (its topic configs over the broker's), as the logs are opened with. */
  readonly storageConfigFor: (topic: string) => LogConfig;
}

/** What startReplication leaves for the controller and the request handlers. */
interface Replication {
  readonly topicConfigs: TopicConfigs;
  readonly metadata: MetadataCache;
  readonly replicas: ReplicaManager;
  readonly producerIds: ProducerIdManager;
  readonly leaderReplicationQuota: ReplicationQuota;
  readonly dynamicConfig: DynamicConfig;
  readonly quotas: ClientQuotas;
  readonly controllerRequests: ControllerRequests;
}

export interface BoundListener {
  readonly name: string;
  readonly host: string;
  readonly port: number;
}

export class Broker {
  private embeddedStore: InProcessStore | null = null;
  private store: CoordinationStore | null = null;
  private logs: LogDirs | null = null;
  private server: SocketServer | null = null;
  private certificateReloader: CertificateReloader | null = null;
  /** listeners, advertised.listeners and listener SASL settings changed at runtime. */
  private dynamicListeners: DynamicListeners | null = null;
  private controller: Controller | null = null;
  private dynamicConfig: DynamicConfig | null = null;
  private fetchers: ReplicaFetchers | null = null;
  /** Moves replicas between log directories (AlterReplicaLogDirs). */
  private logDirMover: LogDirMover | null = null;
  private isrManager: IsrManager | null = null;
  private brokerEpoch = -1;
  private registration: BrokerRegistration | null = null;
  private controllerRequests: ControllerRequests | null = null;
  private wireChannel: WireChannel | null = null;
  /** TLS and SASL of this broker's connections to other brokers' inter-broker listener. */
  private interBroker: InterBrokerSecurity = PLAINTEXT_INTER_BROKER;
  /** TLS to ZooKeeper (zookeeper.ssl.client.enable), or null for plain TCP. */
  private zooKeeperTls: TlsConnectionOptions | null = null;
  /** KIP-612 IP connection-rate quotas, once the dynamic configs are read. */
  private ipQuotas: IpConnectionQuotas | null = null;
  /** SASL to ZooKeeper (a JAAS Client section named in KAFKA_OPTS), or null. */
  private zooKeeperSasl: (() => ZooKeeperSaslExchange) | null = null;
  /** zookeeper.set.acl: the znodes this broker creates get Kafka's secure ACLs. */
  private zooKeeperSecureAcls = false;
  /** The last TLS or SASL failure logged for the ZooKeeper connection: a reconnecting client repeats it every attempt. */
  private lastZooKeeperConnectionError = '';
  private services: BrokerServices | null = null;
  /** The request dispatcher, once the broker serves (until then not-ready.ts answers). */
  private dispatch: RequestHandler | null = null;
  private groupCoordinator: GroupCoordinator | null = null;
  private groupTicker: NodeJS.Timeout | null = null;
  private transactions: TransactionWiring | null = null;
  private markers: { close(): void } | null = null;
  private starting: Promise<unknown> | null = null;
  private stopping: Promise<void> | null = null;
  /** brook.metrics.listener: /metrics, /healthz, /readyz; null when unset. */
  private metricsEndpoint: MetricsEndpoint | null = null;
  /** Where the metrics endpoint listens, for the console's charts. */
  private metricsAddress: { host: string; port: number } | null = null;
  /** brook.console.listener: the web console, a client of this broker's own listener; null when unset. */
  private webConsole: WebConsole | null = null;
  private registered = false;
  private authorizer: AclAuthorizer | null = null;
  private delegationTokens: DelegationTokenManager | null = null;
  private connectionCreationRates: ConnectionCreationRates | null = null;
  private serving = false;
  /** brook.encryption.key.rotation.check.interval.ms, one per log directory; empty without a key provider. */
  private keyRotations: KeyRotation[] = [];
  private logDirFailed = false;
  readonly brokerId: BrokerId;

  constructor(private readonly options: BrokerOptions) {
    this.brokerId = Math.max(options.config.brokerId, 0) as BrokerId;
  }

  start(): Promise<BoundListener[]> {
    const started = this.runStart();
    this.starting = started;
    return started;
  }

  /**
   * The start, phase by phase, in Kafka's order (src/broker/README.md "Lifecycle" gives the same order). Each
   * phase sets the broker's fields that stop() closes, so a start that fails part way is cleaned up by stop().
   */
  private async runStart(): Promise<BoundListener[]> {
    const keyStores = await this.openKeyStores();
    await this.startMetrics();
    this.store = await this.openStore(this.options.config.logDirs[0]!);
    const storage = await this.loadLogs(keyStores);
    const bound = await this.bindListeners(storage.framePool);
    await this.registerInCluster();
    const replication = await this.startReplication(storage);
    const controller = this.createController(replication);
    const services = await this.createServices(replication, controller);
    await this.serve(services, bound);
    return bound;
  }

  /**
   * Phase: the encryption key store of each log directory, first of all: a missing or wrong master key must stop
   * the broker before any file is touched. Each log directory keeps its own encryption.keys; they are opened
   * together (a remote key service's round trips overlap), and the first directory in log.dirs order that fails
   * is the one reported.
   */
  private async openKeyStores(): Promise<Map<string, KeyStore | null>> {
    const { config, clock } = this.options;
    const settings = encryptionSettingsOf(config);
    const opened = await Promise.allSettled(
      config.logDirs.map((dir) => openKeyStore(settings, dir, clock.nowMs())),
    );
    const keyStores = new Map<string, KeyStore | null>();
    for (const [i, result] of opened.entries()) {
      if (result.status === 'rejected') throw result.reason;
      keyStores.set(config.logDirs[i]!, result.value);
    }
    return keyStores;
  }

  /**
   * Phase: the partition logs of every log directory, loaded (recovered after an unclean shutdown) before the
   * broker registers, as in Kafka: a registered broker may be elected leader at once, and a leader must not serve
   * a log still being recovered. Also the encryption key rotation of each directory with a key store.
   */
  private async loadLogs(keyStores: ReadonlyMap<string, KeyStore | null>): Promise<LoadedStorage> {
    const { config, clock, logger } = this.options;
    const keyStore = keyStores.get(config.logDirs[0]!) ?? null;
    const topicConfigs = new TopicConfigs(staticOnly(this.options.staticConfig));
    // A debugging aid, not an operator's setting: see common/frame-pool.ts.
    const poisonFrames = process.env.BROOK_DEBUG_POISON_FRAMES === '1';
    const framePool = new FramePool(config.brookNetworkFramePoolBytes, poisonFrames);
    // The cluster id comes first, for the log directory's meta.properties check.
    // These reads wait out a ZooKeeper outage, as Kafka's do (start-reads.ts).
    const reads = new StartReads(this.store!, () => this.stopping !== null, logger.child('start'));
    const clusterIdRead = await readClusterId(reads);
    if (!clusterIdRead.ok) throw new Error(`reading the cluster id failed: ${clusterIdRead.reason}`);
    const clusterId = clusterIdRead.value;
    await this.readOverridesOfLogsOnDisk(reads, topicConfigs);
    await DynamicConfig.loadBeforeLogs(reads, this.brokerId, topicConfigs, logger.child('config'));
    const storageConfigFor = (topic: string) =>
      // The group commit keys are cluster-wide dynamic: read from the merged layers each time, so a change
      // reaches every log when DynamicConfig re-reads the layers and refreshes each partition's settings.
      toStorageLogConfig(
        topicConfigs.settingsFor(topic),
        groupCommitOf(topicConfigs.mergedBrokerConfig()),
        keyStore !== null,
      );
    this.logs = LogDirs.open({
      dirs: config.logDirs,
      clock,
      configFor: storageConfigFor,
      managerConfig: toLogManagerConfig(config),
      meta: { version: 1, brokerId: this.brokerId, clusterId },
      onBackgroundError: (dir, err) => {
        logger.error(`storage: ${err.message}`);
        this.checkLogDirFailure(dir, err);
      },
      framePool,
      keysFor: (dir) => keyStores.get(dir) ?? null,
      logger: logger.child('storage'),
    });
    this.reportLoadFailures(this.logs);
    for (const store of keyStores.values()) {
      if (store === null) continue;
      const rotation = new KeyRotation(store, logger, () => clock.nowMs());
      rotation.start(config.values.long('brook.encryption.key.rotation.check.interval.ms'));
      this.keyRotations.push(rotation);
    }
    const logCount = [...this.logs.allLogs()].length;
    if (!this.logs.hadCleanShutdown && logCount > 0) {
      logger.info(`no clean-shutdown marker: ${logCount} partition logs were recovered`);
    }
    return { clusterId, topicConfigs, framePool, storageConfigFor };
  }

  /**
   * The config overrides of every topic with a log on disk, read before the logs are opened so that each is opened
   * with its topic's (segment.bytes, cleanup.policy, retention), as Kafka's LogManager.startup reads them
   * (fetchTopicConfigOverrides) before loading. One read per topic, all at once. A topic without a config node
   * has no overrides; any other failed read stops the start, as in Kafka, where the ZooKeeper error of
   * getEntityConfigs fails LogManager.startup: opened on the broker's defaults until the controller's first
   * request, a topic kept forever (retention.ms=-1) could lose data to a retention or cleaner pass meanwhile. A
   * ZooKeeper that is only unreachable is waited for however long it takes (`store` is StartReads), as Kafka's
   * retryRequestsUntilConnected waits for the connection.
   */
  private async readOverridesOfLogsOnDisk(
    store: CoordinationStore,
    topicConfigs: TopicConfigs,
  ): Promise<void> {
    const topics = topicsOnDisk(this.options.config.logDirs);
    if (topics.size === 0) return;
    const unread = await readTopicOverrides(store, topics, topicConfigs);
    if (unread.length === 0) return;
    const shown =
      unread
        .slice(0, 10)
        .map((u) => `${u.topic}: ${u.reason}`)
        .join(', ') + (unread.length > 10 ? ', ...' : '');
    throw new Error(
      `reading the config overrides of ${unread.length} topics with logs on disk failed (${shown}): the broker ` +
        `does not start rather than open their logs on the broker's defaults`,
    );
  }

  /**
   * Log directories with a damaged checkpoint are offline from the start (LogDirs.open). As Kafka's
   * LogDirFailureHandler: each is logged with the file, and when none is left the broker does not start.
   */
  private reportLoadFailures(logs: LogDirs): void {
    const { logger } = this.options;
    const failures = logs.loadFailures;
    for (const { dir, error } of failures) {
      logger.error(`storage: error while reading a checkpoint file in ${dir}: ${error.message}`);
    }
    if (failures.length === 0) return;
    if (logs.onlineManagers.length === 0) {
      logs.shutdown();
      throw new Error(`shutdown broker because all log dirs in ${logs.dirs.join(', ')} have failed`);
    }
    logger.error(`log directories offline: ${logs.offlineDirs.join(', ')}; serving the others`);
    void this.notifyLogDirFailure();
  }

  /**
   * Phase: the listeners bound, before registration, because the registration carries the bound ports (port 0 in
   * tests). Requests that arrive before the services exist are answered by not-ready.ts.
   */
  private async bindListeners(framePool: FramePool): Promise<BoundListener[]> {
    const { config, logger } = this.options;
    const beforeReady = notReadyHandler(logger, () => this.brokerEpoch);
    this.interBroker = interBrokerSecurity(config);
    const creationRates = new ConnectionCreationRates(
      {
        samples: config.values.int('quota.window.num'),
        windowMs: config.values.int('quota.window.size.seconds') * 1000,
      },
      config.listeners.length > 1 ? config.interBrokerListenerName : null,
    );
    creationRates.configure(config.values.originals);
    this.connectionCreationRates = creationRates;
    this.server = new SocketServer({
      listeners: securedListeners(config),
      connectionThrottleMs: (address) => this.ipQuotas?.throttleMs(address, Date.now()) ?? 0,
      listenerThrottleMs: (listener, nowMs) => creationRates.throttleMs(listener, nowMs),
      protectedListener: () => creationRates.protectedListenerName,
      handler: (request) => {
        const dispatch = this.dispatch;
        // After a SaslHandshake v1 only the SASL exchange is handled; anything else is answered with an error.
        if (refusedDuringAuthentication(request)) {
          if (this.services === null) throw new NotReadyError('the broker is still starting');
          return refuseRequest(this.services.sasl, request);
        }
        if (dispatch === null) return beforeReady(request);
        // Bare SASL tokens (after a SaslHandshake v0) have no header for the dispatcher to read.
        if (request.apiKey === RAW_SASL_TOKEN_API_KEY) return rawSaslToken(this.services!.sasl, request);
        return dispatch(request);
      },
      options: toNetworkOptions(config),
      logger,
      framePool,
      // A benchmarking and debugging aid, not an operator's setting: see src/network/own-reads.ts.
      readsIntoFrames: process.env.BROOK_DEBUG_NODE_READS !== '1',
      requestObserver: this.metricsEndpoint?.metrics.requests,
    });
    // The static config's limits, listener.name.<listener>.max.connections included (not a network option).
    this.server.updateConnectionLimits(connectionLimitsOf(config.values.originals));
    await this.server.start();
    const server = this.server;
    this.certificateReloader = new CertificateReloader(
      config,
      (name, options) => server.updateTls(name, options),
      logger.child('tls'),
    );
    this.certificateReloader.start();
    this.dynamicListeners = new DynamicListeners({
      initial: config,
      server,
      certificates: this.certificateReloader,
      sasl: () => this.services?.sasl ?? null,
      advertise: (endpoints) => this.advertise(endpoints),
      listenersChanged: (listeners) =>
        creationRates.protect(listeners.length > 1 ? config.interBrokerListenerName : null),
      logger: logger.child('listeners'),
    });
    return config.listeners.map((l) => {
      const address = this.server!.address(l.name);
      return { name: l.name, host: address.host, port: address.port };
    });
  }

  /**
   * New advertised endpoints after a dynamic listener change: the registration is rewritten in place (Kafka's
   * updateBrokerInfo), and a later registration (after a session expiry) carries them too.
   */
  private async advertise(endpoints: BrokerEndpoint[]): Promise<void> {
    const store = this.store;
    if (this.registration === null || store === null) return;
    this.registration = { ...this.registration, endpoints };
    if (!this.registered) return;
    const updated = await updateBrokerRegistration(store, this.registration);
    if (!updated.ok) this.options.logger.warn(`broker registration not updated: ${updated.reason}`);
  }

  /**
   * Phase: this broker's registration in /brokers/ids with its advertised endpoints. Only now can the controller
   * elect it leader (never of a log still being recovered). Sets the broker epoch.
   */
  private async registerInCluster(): Promise<void> {
    const { config, clock } = this.options;
    // A listener bound to port 0 is advertised with the port the system chose.
    const endpoints = this.dynamicListeners!.endpoints();
    this.registration = {
      brokerId: this.brokerId,
      endpoints,
      rack: config.brokerRack,
      jmxPort: -1,
      timestampMs: clock.nowMs(),
      features: {},
    };
    const registered = await this.register(this.store!, this.registration);
    if (!registered.ok) throw new Error(`broker registration failed: ${registered.reason}`);
    this.registered = true;
    void this.watchOwnRegistration();
    this.brokerEpoch = registered.value.brokerEpoch;
  }

  /**
   * Phase: the replicas this broker hosts and what keeps them: the replica manager, moves between log directories,
   * replication quotas, dynamic configs and client quotas (read once before serving), the handler of the
   * controller's requests and the replica fetchers.
   */
  private async startReplication(storage: LoadedStorage): Promise<Replication> {
    const { config, clock, logger } = this.options;
    const { clusterId, topicConfigs, storageConfigFor, framePool } = storage;
    const metadata = new MetadataCache(clusterId);
    const logs = this.logs!;
    const replicas = new ReplicaManager(
      this.brokerId,
      logs,
      topicConfigs,
      logger.child('replicas'),
      storageConfigFor,
      clock,
      {
        lagTimeMaxMs: config.replicaLagTimeMaxMs,
        isAlive: (id) => metadata.broker(id) !== undefined,
      },
    );
    const store = this.store!;
    const producerIds = new ProducerIdManager(store, this.brokerId);
    const logDirMover = new LogDirMover({
      logs,
      replicas,
      logger: logger.child('log-dir-mover'),
      onError: (dir, err) => this.checkLogDirFailure(dir, err),
      maxBytesPerSecond: () => {
        const text = topicConfigs.mergedBrokerConfig().get('replica.alter.log.dirs.io.max.bytes.per.second');
        const n = text === undefined ? Number.NaN : Number(text);
        return Number.isFinite(n) && n >= 0 && n < 2 ** 63 - 1024 ? n : Number.POSITIVE_INFINITY;
      },
      rateWindow: {
        samples: config.values.int('replication.quota.window.num'),
        windowMs: config.values.int('replication.quota.window.size.seconds') * 1000,
      },
    });
    this.logDirMover = logDirMover;
    // Moves left by the previous run (future logs found at load) resume once their partitions are hosted.
    logDirMover.start();
    const replicationWindow = {
      samples: config.values.int('replication.quota.window.num'),
      windowMs: config.values.int('replication.quota.window.size.seconds') * 1000,
    };
    const leaderReplicationQuota = new ReplicationQuota(
      'leader',
      this.brokerId,
      topicConfigs,
      replicationWindow,
    );
    const followerReplicationQuota = new ReplicationQuota(
      'follower',
      this.brokerId,
      topicConfigs,
      replicationWindow,
    );
    leaderReplicationQuota.refreshRate();
    followerReplicationQuota.refreshRate();
    const dynamicConfig = new DynamicConfig(
      store,
      this.brokerId,
      topicConfigs,
      replicas,
      logger.child('config'),
      // The log.cleaner.* keys Kafka makes dynamic (threads, throttle, buffers, backoff) reach the cleaner.
      // The replication throttle rates are dynamic broker configs too.
      () => {
        leaderReplicationQuota.refreshRate();
        followerReplicationQuota.refreshRate();
        logs.reconfigureCleaner(cleanerConfigOf(topicConfigs.mergedBrokerConfig()));
        // max.connection.creation.rate and its listener overrides are dynamic (KIP-612).
        this.connectionCreationRates?.configure(topicConfigs.mergedBrokerConfig());
        // Altered listener ssl.* keys reload that listener's certificates (KIP-226).
        this.certificateReloader?.brokerConfigChanged(topicConfigs.mergedBrokerConfig());
        // listeners, advertised.listeners, the protocol map and SASL settings (KIP-226's DynamicListenerConfig).
        this.dynamicListeners?.configChanged(topicConfigs.mergedBrokerConfig());
        // producer.id.expiration.ms is cluster-wide dynamic (KIP-854).
        const expiration = topicConfigs.mergedBrokerConfig().get('producer.id.expiration.ms');
        logs.setProducerIdExpirationMs(
          expiration === undefined ? config.producerIdExpirationMs : Number(expiration),
        );
        // max.connections, max.connections.per.ip and its overrides are dynamic: new connections count against them.
        this.server?.updateConnectionLimits(connectionLimitsOf(topicConfigs.mergedBrokerConfig()));
        // unclean.leader.election.enable is cluster-wide dynamic: leaderless partitions are looked at again.
        this.controller?.uncleanLeaderElectionMayBeEnabled();
        // num.replica.fetchers is cluster-wide dynamic: partitions move between fetchers with their state.
        this.fetchers?.resize(
          numReplicaFetchersOf(topicConfigs.mergedBrokerConfig(), config.numReplicaFetchers),
        );
      },
      (topic) => {
        if (topicConfigs.overridesFor(topic).get(UNCLEAN_KEY)?.trim().toLowerCase() === 'true')
          this.controller?.uncleanLeaderElectionMayBeEnabled();
      },
    );
    this.dynamicConfig = dynamicConfig;
    const quotas = new ClientQuotas(
      new ClientQuotaStore(store, dynamicConfig),
      config,
      logger.child('quotas'),
    );
    dynamicConfig.addListener(quotas);
    this.ipQuotas = new IpConnectionQuotas(
      quotas.store,
      {
        samples: config.values.int('quota.window.num'),
        windowMs: config.values.int('quota.window.size.seconds') * 1000,
      },
      logger.child('quotas'),
    );
    dynamicConfig.addListener(this.ipQuotas);
    await dynamicConfig.start();
    const controllerRequests = new ControllerRequests(
      store,
      metadata,
      replicas,
      topicConfigs,
      logger.child('controller-requests'),
    );
    controllerRequests.brokerEpoch = this.brokerEpoch;
    this.controllerRequests = controllerRequests;
    this.fetchers = new ReplicaFetchers(
      {
        brokerId: this.brokerId,
        numFetchers: numReplicaFetchersOf(topicConfigs.mergedBrokerConfig(), config.numReplicaFetchers),
        listenerName: config.interBrokerListenerName,
        fetchMaxBytes: config.replicaFetchMaxBytes,
        responseMaxBytes: config.replicaFetchResponseMaxBytes,
        waitMaxMs: config.replicaFetchWaitMaxMs,
        minBytes: config.replicaFetchMinBytes,
        backoffMs: config.replicaFetchBackoffMs,
        socketTimeoutMs: config.replicaSocketTimeoutMs,
        security: this.interBroker,
        quota: followerReplicationQuota,
        brokerEpoch: () => this.brokerEpoch,
      },
      replicas,
      metadata,
      // A follower serves consumers too (KIP-392): their fetches waiting here for its high watermark to move.
      (p) => {
        if (this.services !== null) completeDelayedRequests(this.services, p.key);
      },
      logger.child('fetcher'),
      { clock, framePool },
    );
    const fetchers = this.fetchers;
    controllerRequests.onReplicasChanged = (keys) => {
      fetchers.refresh();
      // A changed ISR can move the high watermark, and a partition led elsewhere now answers its waiting writes
      // and fetches with NOT_LEADER_OR_FOLLOWER.
      const services = this.services;
      if (services !== null) for (const key of keys) completeDelayedRequests(services, key);
    };
    return {
      topicConfigs,
      metadata,
      replicas,
      producerIds,
      leaderReplicationQuota,
      dynamicConfig,
      quotas,
      controllerRequests,
    };
  }

  /** Phase: the controller (it runs for election once the broker serves). */
  private createController(replication: Replication): Controller {
    const { config, clock, logger } = this.options;
    const channel = this.controllerChannel(replication.controllerRequests, replication.metadata);
    this.controller = new Controller({
      store: this.store!,
      brokerId: this.brokerId,
      channel,
      clock,
      logger: logger.child('controller'),
      interBrokerListener: config.interBrokerListenerName,
      // Read at each election: a dynamic broker or cluster-default value counts as soon as it is loaded.
      uncleanLeaderElectionEnable: () =>
        replication.topicConfigs.mergedBrokerConfig().get(UNCLEAN_KEY)?.trim().toLowerCase() === 'true',
      deleteTopicEnable: config.deleteTopicEnable,
      autoLeaderRebalance: config.autoLeaderRebalanceEnable
        ? {
            imbalancePerBrokerPercentage: config.leaderImbalancePerBrokerPercentage,
            checkIntervalMs: config.leaderImbalanceCheckIntervalSeconds * 1000,
          }
        : null,
      selfHealing: {
        brokerFailureTimeoutMs: config.brookSelfHealingBrokerFailureTimeoutMs,
        throttledRateBytesPerSecond: config.brookSelfHealingReplicationThrottledRate,
      },
      liveness: {
        intervalMs: config.values.int('brook.controller.liveness.probe.interval.ms'),
        refusalsToFence: config.values.int('brook.controller.liveness.probe.refusals'),
      },
    });
    return this.controller;
  }

  /**
   * Phase: what the request handlers need (BrokerServices): topic administration, purgatories, the group and
   * transaction coordinators, the authorizer, delegation tokens, SASL.
   */
  private async createServices(replication: Replication, controller: Controller): Promise<BrokerServices> {
    const { config, clock, logger } = this.options;
    const {
      topicConfigs,
      metadata,
      replicas,
      producerIds,
      leaderReplicationQuota,
      dynamicConfig,
      quotas,
      controllerRequests,
    } = replication;
    const store = this.store!;
    const topicAdmin = new TopicAdmin({
      store,
      defaults: {
        numPartitions: config.numPartitions,
        replicationFactor: config.defaultReplicationFactor,
        deleteTopicEnable: config.deleteTopicEnable,
      },
      propagation: new PropagationWaiter(controller, metadata, clock),
    });
    const producePurgatory = new Purgatory('produce', PRODUCE_PURGATORY_MAX, clock);
    const fetchPurgatory = new Purgatory('fetch', FETCH_PURGATORY_MAX, clock);
    replicas.onAppendWritten((p) => completeDelayedRequests({ producePurgatory, fetchPurgatory }, p.key));
    const leadershipConfirmations = new LeadershipConfirmations(clock, (key) =>
      fetchPurgatory.checkAndComplete(key),
    );
    const groupCoordinator = this.createGroupCoordinator(
      replicas,
      metadata,
      topicAdmin,
      producePurgatory,
      leadershipConfirmations,
    );
    controllerRequests.onPartitionsDeleted = (partitions) =>
      groupCoordinator.removeOffsetsOfDeletedPartitions(partitions);
    const transactions = createTransactionCoordinator({
      config,
      clock,
      logger,
      replicas,
      metadata,
      topicAdmin,
      producePurgatory,
      nextProducerId: () => producerIds.nextId(),
    });
    this.transactions = transactions;
    const authorizer = await this.startAuthorizer(store);
    this.authorizer = authorizer;
    const delegationTokens = new DelegationTokenManager(
      store,
      delegationTokenSettings(config),
      logger.child('tokens'),
    );
    await delegationTokens.start();
    this.delegationTokens = delegationTokens;
    const services: BrokerServices = {
      authorizer,
      delegationTokens,
      sasl: new SaslAuthenticator(
        this.dynamicListeners!.sasl(),
        store,
        logger.child('sasl'),
        (id, m) => delegationTokens.tokenCredential(id, m),
        config.values.int('connection.failed.authentication.delay.ms'),
      ),
      interBrokerSecurity: this.interBroker,
      brokerId: this.brokerId,
      config,
      clock,
      logger,
      logLevels: this.options.logLevels ?? runtimeLogLevels(),
      metadata,
      topicConfigs,
      dynamicConfig,
      replicas,
      quotas,
      leaderReplicationQuota,
      controllerRequests,
      logs: this.logs!,
      logDirMover: this.logDirMover!,
      topicAdmin,
      controller,
      fetchSessions: new FetchSessionCache({
        slots: config.maxIncrementalFetchSessionCacheSlots,
        evictionMs: FETCH_SESSION_EVICTION_MS,
        nowMs: () => clock.monotonicMs(),
      }),
      producePurgatory,
      fetchPurgatory,
      leadershipConfirmations,
      groupCoordinator,
      zooKeeperConsumerOffsets: new ZooKeeperConsumerOffsets(store),
      transactionCoordinator: transactions.coordinator,
      topicStats: this.metricsEndpoint?.metrics.topicStats ?? null,
      apiVersions: advertisedApiVersions(HANDLERS),
      nextProducerId: () => producerIds.nextId(),
      autoCreateTopics: async (names) => {
        const results = await topicAdmin.createTopics(
          names.map((name) => ({
            name,
            numPartitions: -1,
            replicationFactor: -1,
            assignments: [],
            configs: {},
          })),
          false,
        );
        for (const r of results) {
          if (r.errorCode !== ErrorCode.NONE && r.errorCode !== ErrorCode.TOPIC_ALREADY_EXISTS) {
            logger.warn(`auto-creating topic ${r.name} failed: ${r.errorMessage ?? r.errorCode}`);
          }
        }
        return results.filter((r) => r.errorCode === ErrorCode.NONE).map((r) => r.name);
      },
    };
    this.services = services;
    return services;
  }

  /**
   * Phase: serving. The transaction markers' writer, the ISR manager, the request dispatcher (requests stop being
   * answered by not-ready.ts), metrics, the controller's run for election, the log scheduler (retention,
   * flushes, the cleaner) and the web console.
   */
  private async serve(services: BrokerServices, bound: readonly BoundListener[]): Promise<void> {
    const { config, clock, logger } = this.options;
    const markers = markerWriter(services);
    this.markers = markers;
    this.transactions!.writeMarkers = (request) => markers.write(request);
    this.isrManager = new IsrManager(
      this.brokerId,
      config.replicaLagTimeMaxMs,
      config.interBrokerListenerName,
      services.replicas,
      services.metadata,
      services.controller,
      clock,
      (p) => services.producePurgatory.checkAndComplete(p.key),
      logger.child('isr'),
      this.interBroker,
    );
    this.isrManager.brokerEpoch = this.brokerEpoch;
    this.isrManager.start();
    this.dispatch = createRequestDispatcher(
      HANDLERS,
      services,
      logger,
      this.options.requestInterception ?? null,
    );
    this.serving = true;
    this.attachMetrics();
    await services.controller.start();
    this.logs!.startScheduler();
    await this.startConsole(bound);
  }

  /**
   * The web console, once the broker serves: it speaks to this broker through Brook's client like any other
   * client, over the inter-broker listener with the broker's own inter-broker TLS and SASL settings
   * (src/console/broker-console.ts), so it works whatever the listeners' security protocols. With
   * brook.metrics.listener its charts read this broker's /metrics.
   */
  private async startConsole(bound: readonly BoundListener[]): Promise<void> {
    const { config, logger } = this.options;
    if (config.brookConsoleListener === null) return;
    const address = parseMetricsListener(config.brookConsoleListener);
    if (!address.ok) throw new Error(`brook.console.listener: ${address.reason}`);
    const client = brokerConsoleClient(
      bound,
      config.interBrokerListenerName,
      this.interBroker,
      `brook-console-${this.brokerId}`,
    );
    const metrics = this.metricsAddress;
    const metricsHost =
      metrics === null ? '' : metrics.host.includes(':') ? `[${metrics.host}]` : metrics.host;
    const consoleLogger = logger.child('console');
    this.webConsole = new WebConsole({
      client,
      host: address.value.host,
      port: address.value.port,
      metricsUrls: metrics === null ? [] : [`http://${metricsHost}:${metrics.port}/metrics`],
      log: (line) => consoleLogger.info(line),
    });
    const served = await this.webConsole.start();
    const shown = served.host.includes(':') ? `[${served.host}]` : served.host;
    logger.info(
      `console listening at http://${shown}:${served.port}/ (a client of ${config.interBrokerListenerName} at ${client.bootstrapServers})`,
    );
  }

  /** The ACL authorizer when authorizer.class.name names it: every ACL read before the broker serves. */
  private async startAuthorizer(store: CoordinationStore): Promise<AclAuthorizer | null> {
    const { config, logger } = this.options;
    if (config.authorizerClassName === '') return null;
    const level = config.brookAuthorizerLogLevel;
    // DEBUG lines of the authorization log are written whatever the broker's own level is.
    const auditLevel = level === 'DEBUG' ? 'debug' : 'info';
    const auditLogger =
      this.options.namedLogger?.(AUDIT_LOGGER_NAME, auditLevel) ??
      (level === 'DEBUG' ? createLogger(AUDIT_LOGGER_NAME, 'debug') : logger.child('authorizer'));
    const authorizer = new AclAuthorizer(
      store,
      {
        superUsers: parseSuperUsers(config.superUsers),
        allowEveryoneIfNoAclFound: config.allowEveryoneIfNoAclFound,
      },
      logger.child('acl'),
      new AuditLog(level, auditLogger),
    );
    await authorizer.start();
    return authorizer;
  }

  /** Starts the metrics endpoint first, so that /healthz answers and /readyz says what is missing meanwhile. */
  private async startMetrics(): Promise<void> {
    const { config, logger } = this.options;
    if (config.brookMetricsListener === null) return;
    const listener = parseMetricsListener(config.brookMetricsListener);
    if (!listener.ok) throw new Error(`brook.metrics.listener: ${listener.reason}`);
    this.metricsEndpoint = new MetricsEndpoint(
      listener.value,
      () => ({
        logsLoaded: this.logs !== null,
        registered: this.registered,
        serving: this.serving,
        inCluster: config.zookeeperConnect !== null,
        brokerId: this.brokerId,
        replicas: this.services?.replicas ?? null,
        metadata: this.services?.metadata ?? null,
      }),
      logger.child('metrics'),
    );
    const bound = await this.metricsEndpoint.start();
    this.metricsAddress = bound;
    logger.info(`metrics listening on http://${bound.host}:${bound.port}`);
  }

  /** The scrape reads the broker's state from now on. */
  private attachMetrics(): void {
    const services = this.services;
    const fetchers = this.fetchers;
    const isrManager = this.isrManager;
    if (this.metricsEndpoint === null || services === null || fetchers === null || isrManager === null)
      return;
    this.metricsEndpoint.attach({
      replicas: services.replicas,
      metadata: services.metadata,
      controller: services.controller,
      groupCoordinator: services.groupCoordinator,
      transactionCoordinator: services.transactionCoordinator,
      networkStats: this.server!.stats,
      framePool: this.server!.framePool,
      inlineReads: services.logs.inlineReads,
      isrChanges: isrManager.isrChanges,
      followerLags: () => fetchers.followerLags(),
    });
  }

  /** The group coordinator follows the leadership of __consumer_offsets partitions and checks its deadlines. */
  private createGroupCoordinator(
    replicas: ReplicaManager,
    metadata: MetadataCache,
    topicAdmin: TopicAdmin,
    producePurgatory: Purgatory,
    leadershipConfirmations: LeadershipConfirmations,
  ): GroupCoordinator {
    const { config, clock, logger } = this.options;
    const coordinator = new GroupCoordinator({
      config,
      clock,
      logger: logger.child('groups'),
      partitionCount: () =>
        metadata.topic(OFFSETS_TOPIC)?.partitions.length ?? config.offsetsTopicNumPartitions,
      topics: (names) => {
        const found = new Map<string, { name: string; topicId: string; partitionCount: number }>();
        for (const name of names) {
          const t = metadata.topic(name);
          if (t !== undefined)
            found.set(name, { name, topicId: t.topicId, partitionCount: t.partitions.length });
        }
        return found;
      },
      storage: partitionGroupStorage({
        partition: (index) => replicas.get(OFFSETS_TOPIC, index),
        appendAsLeader: internalTopicAppender({ replicas, producePurgatory }, OFFSETS_TOPIC, () =>
          clock.nowMs(),
        ),
        compression: config.offsetsTopicCompressionCodec,
        commitTimeoutMs: config.offsetsCommitTimeoutMs,
        loadBufferBytes: config.offsetsLoadBufferSize,
        nowMs: () => clock.nowMs(),
        confirmLeadership: (index) => {
          const partition = replicas.get(OFFSETS_TOPIC, index);
          if (partition === undefined) return Promise.resolve(false);
          return leadershipConfirmations.confirm(partition, config.offsetsCommitTimeoutMs);
        },
      }),
      schedule: (run, delayMs) => {
        const timer = setTimeout(run, delayMs);
        timer.unref();
        return () => clearTimeout(timer);
      },
      createOffsetsTopic: async () => {
        const [result] = await topicAdmin.createTopics(
          [
            {
              name: OFFSETS_TOPIC,
              numPartitions: config.offsetsTopicNumPartitions,
              replicationFactor: config.offsetsTopicReplicationFactor,
              assignments: [],
              configs: {
                'cleanup.policy': 'compact',
                'compression.type': 'producer',
                'segment.bytes': String(config.offsetsTopicSegmentBytes),
              },
            },
          ],
          false,
        );
        if (
          result !== undefined &&
          result.errorCode !== ErrorCode.NONE &&
          result.errorCode !== ErrorCode.TOPIC_ALREADY_EXISTS
        ) {
          logger.warn(`creating ${OFFSETS_TOPIC} failed: ${result.errorMessage ?? result.errorCode}`);
        }
        return result?.errorCode === ErrorCode.NONE ? config.offsetsTopicNumPartitions : 0;
      },
    });
    replicas.onLeadershipChange((partition, isLeader) => {
      if (partition.topic === OFFSETS_TOPIC) coordinator.onLeadershipChange(partition.partition, isLeader);
    });
    this.groupCoordinator = coordinator;
    this.groupTicker = setInterval(() => coordinator.tick(), GROUP_TICK_MS);
    this.groupTicker.unref();
    return coordinator;
  }

  /**
   * Direct calls for this broker; over the wire for the others, which only a cluster (zookeeper.connect) has.
   */
  private controllerChannel(requests: ControllerRequests, metadata: MetadataCache): BrokerChannel {
    const local: BrokerChannel = {
      leaderAndIsr: (_id, request) => requests.leaderAndIsr(request),
      updateMetadata: (_id, request) => requests.updateMetadata(request),
      stopReplica: (_id, request) => requests.stopReplica(request),
    };
    if (this.options.config.zookeeperConnect === null) return local;
    this.wireChannel = new WireChannel(
      this.brokerId,
      local,
      this.options.config.interBrokerListenerName,
      this.interBroker,
      (id) => {
        const e = metadata.endpointFor(id, this.options.config.interBrokerListenerName);
        return e === undefined ? undefined : { host: e.host === '' ? '127.0.0.1' : e.host, port: e.port };
      },
    );
    return this.wireChannel;
  }

  /**
   * Controlled shutdown (controlled.shutdown.enable): in a cluster, ask the controller to move leadership of
   * this broker's partitions to other in-sync replicas before stopping, so clients see a leader change rather
   * than errors. Retried controlled.shutdown.max.retries times while partitions remain.
   */
  private async moveLeadershipAway(): Promise<void> {
    const { config, logger } = this.options;
    if (config.zookeeperConnect === null || !config.controlledShutdownEnable || this.controller === null)
      return;
    const request = { brokerId: this.brokerId, brokerEpoch: BigInt(this.brokerEpoch) };
    for (let attempt = 0; attempt <= config.controlledShutdownMaxRetries; attempt++) {
      try {
        const response = this.controller.isActive
          ? await this.controller.controlledShutdown(request)
          : await this.sendToController<{ errorCode: number; remainingPartitions: unknown[] }>(
              ApiKey.CONTROLLED_SHUTDOWN,
              3,
              request,
            );
        if (response.errorCode === ErrorCode.NONE && response.remainingPartitions.length === 0) {
          logger.info('controlled shutdown: leadership moved away');
          return;
        }
      } catch (err) {
        logger.warn(
          `controlled shutdown attempt failed: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      await new Promise((r) => setTimeout(r, config.controlledShutdownRetryBackoffMs));
    }
    logger.warn('controlled shutdown did not complete; stopping anyway');
  }

  private async sendToController<T>(apiKey: number, version: number, body: unknown): Promise<T> {
    const metadata = this.services?.metadata;
    const endpoint = metadata?.endpointFor(
      metadata.controllerId,
      this.options.config.interBrokerListenerName,
    );
    if (endpoint === undefined) throw new Error('no controller endpoint known');
    const connection = new InterBrokerConnection(
      endpoint.host,
      endpoint.port,
      `broker-${this.brokerId}`,
      this.interBroker,
    );
    try {
      return await connection.request<T>(apiKey, version, body, CONTROLLED_SHUTDOWN_TIMEOUT_MS);
    } finally {
      connection.close();
    }
  }

  /**
   * After a storage error in `dir`: when a log there failed a write or a read with an I/O error (Log.storageFailed),
   * the directory has failed. As Kafka's ReplicaManager.handleLogDirFailure: the directory goes offline, its
   * partitions stop being served (KAFKA_STORAGE_ERROR), the controller is told through
   * /log_dir_event_notification so that it moves their leadership and removes this replica from their ISRs, and
   * the broker keeps serving its other directories. When no directory is left the broker halts: staying up would
   * keep every partition it leads unwritable until a restart, while once it is down in-sync replicas take over.
   */
  private checkLogDirFailure(dir: string, err: Error): void {
    const logs = this.logs;
    if (this.logDirFailed || logs === null || !logs.isOnline(dir)) return;
    const manager = logs.managers.find((m) => m.dir === dir);
    if (manager === undefined) return;
    // A log that failed a write or a read (a leader's produce, a follower's replicated append, a fetch read, a
    // move between directories): the directory has failed, as any IOException in Kafka's LogDirFailureChannel.
    const failed = [...manager.allLogs(), ...manager.allFutureLogs()].some((log) => log.storageFailed);
    if (!failed) return;
    const { logger } = this.options;
    logs.markOffline(dir);
    if (logs.onlineManagers.length === 0) {
      this.logDirFailed = true;
      logger.error(
        `shutdown broker because all log dirs in ${logs.dirs.join(', ')} have failed (an I/O error: ${err.message})`,
      );
      this.options.onLogDirFailure?.(err);
      return;
    }
    logger.error(`log directory ${dir} is offline (an I/O error: ${err.message}); serving the others`);
    const taken = this.services?.replicas.takeOffline((p) => logs.dirOfLog(p.log) === dir) ?? [];
    this.fetchers?.refresh();
    for (const p of taken) this.services?.producePurgatory.checkAndComplete(p.key);
    if (taken.length > 0) {
      logger.warn(`partitions offline with ${dir}: ${taken.map((p) => p.key).join(', ')}`);
    }
    void this.notifyLogDirFailure();
  }

  /**
   * Kafka's ZooKeeper-mode propagateLogDirEvent: a persistent sequential
   * /log_dir_event_notification/log_dir_event_<seq> with {"version":1,"broker":id,"event":1}. The controller
   * deletes it once read. Retried while the session is down, as the event must not be lost.
   */
  private async notifyLogDirFailure(): Promise<void> {
    for (let attempt = 0; attempt < LOG_DIR_EVENT_ATTEMPTS && this.stopping === null; attempt++) {
      const store = this.store;
      if (store === null) return;
      const written = await writeLogDirFailureEvent(store, this.brokerId);
      if (written.ok) return;
      this.options.logger.warn(`writing the log dir failure event failed (${written.code}); retrying`);
      await new Promise((r) => setTimeout(r, REGISTRATION_RETRY_MS));
    }
  }

  private async openStore(logDir: string): Promise<CoordinationStore> {
    const { config, logger } = this.options;
    if (config.zookeeperConnect === null) {
      if (config.values.boolean('zookeeper.set.acl'))
        logger.warn(
          'zookeeper.set.acl has no effect without zookeeper.connect: the embedded store has no ACLs',
        );
      this.embeddedStore = InProcessStore.open({ dataDir: join(logDir, METADATA_DIR) });
      return this.embeddedStore.openSession({ sessionTimeoutMs: EMBEDDED_SESSION_TIMEOUT_MS });
    }
    this.zooKeeperTls = zooKeeperClientTls(config.values);
    const saslLogin = zooKeeperSaslLogin();
    this.zooKeeperSasl = saslLogin === null ? null : digestExchanges(saslLogin);
    this.zooKeeperSecureAcls = zooKeeperSecureAcls(config.values, this.zooKeeperTls, saslLogin);
    await this.ensureChroot();
    const first = await this.connectZooKeeper();
    return new RenewableSession(
      first,
      () => this.connectZooKeeper(),
      () => this.sessionRenewed(),
      logger.child('session'),
    );
  }

  /**
   * A chroot in zookeeper.connect that does not exist yet is created first, as Kafka's broker does, waiting out a
   * connection loss after the first connection (zookeeper-chroot.ts).
   */
  private async ensureChroot(): Promise<void> {
    const { config, logger } = this.options;
    const options = {
      connect: config.zookeeperConnect!,
      sessionTimeoutMs: config.zookeeperSessionTimeoutMs,
      connectionTimeoutMs: config.zookeeperConnectionTimeoutMs,
      tls: this.zooKeeperTls,
      sasl: this.zooKeeperSasl,
      secureAcls: this.zooKeeperSecureAcls,
      onConnectionError: (err: Error) => this.zooKeeperConnectionError(err),
    };
    const created = await ensureZooKeeperChroot(
      options,
      () => this.stopping !== null,
      logger.child('chroot'),
    );
    if (!created.ok) {
      throw new Error(
        `cannot create the chroot of zookeeper.connect ${config.zookeeperConnect}: ${created.code} at ${created.path ?? '?'}`,
      );
    }
  }

  private zooKeeperConnectionError(err: Error): void {
    if (err.message === this.lastZooKeeperConnectionError) return;
    this.lastZooKeeperConnectionError = err.message;
    this.options.logger.warn(`connection to ZooKeeper failed: ${err.message}`);
  }

  private async connectZooKeeper(): Promise<CoordinationStore> {
    const { config } = this.options;
    const connected = await connectZooKeeper({
      connect: config.zookeeperConnect!,
      sessionTimeoutMs: config.zookeeperSessionTimeoutMs,
      connectionTimeoutMs: config.zookeeperConnectionTimeoutMs,
      tls: this.zooKeeperTls,
      sasl: this.zooKeeperSasl,
      secureAcls: this.zooKeeperSecureAcls,
      onConnectionError: (err) => this.zooKeeperConnectionError(err),
    });
    if (!connected.ok)
      throw new Error(`cannot connect to ZooKeeper at ${config.zookeeperConnect}: ${connected.code}`);
    return connected.value;
  }

  /**
   * Registers this broker. A broker restarted quickly after a crash finds its previous session's registration
   * still there until ZooKeeper expires that session; it waits for that (bounded by the session timeout) rather
   * than failing to start. A session lost meanwhile (CONNECTIONLOSS, SESSIONEXPIRED) is waited for without a bound,
   * until the broker stops, as Kafka's KafkaZkClient sends the persistent paths' creates and the registration again
   * until connected (retryRequestsUntilConnected), on a new session once the old one expired: ZooKeeper briefly
   * unreachable, or log recovery on the event loop outlasting the session the broker opened to read the cluster id,
   * must not fail the start. The session renews itself (RenewableSession) and the next attempt uses the new one; an
   * attempt whose ephemeral node the old session did create finds it as its own (registerBroker).
   */
  private async register(store: CoordinationStore, registration: BrokerRegistration) {
    const { config, logger } = this.options;
    const waitMaxMs = config.zookeeperSessionTimeoutMs * 2 + config.zookeeperConnectionTimeoutMs;
    /** Since when the previous registration has been found (NODEEXISTS): only that wait is bounded. */
    let foundSinceMs: number | null = null;
    let lastCode: string | undefined;
    for (;;) {
      const registered = await registerBroker(store, registration);
      if (registered.ok) return registered;
      const sessionLost = registered.code === 'CONNECTIONLOSS' || registered.code === 'SESSIONEXPIRED';
      if (registered.code !== 'NODEEXISTS' && !sessionLost) return registered;
      foundSinceMs = sessionLost ? null : (foundSinceMs ?? Date.now());
      // A stop during start-up does not wait.
      if (this.stopping !== null || (foundSinceMs !== null && Date.now() - foundSinceMs > waitMaxMs))
        return registered;
      // One line per cause: a ZooKeeper outage may last long, and each attempt is answered within the request timeout.
      if (registered.code !== lastCode) {
        logger.info(
          sessionLost
            ? `registration of broker ${this.brokerId} failed (${registered.reason}: ${registered.code}); retrying until ZooKeeper answers`
            : `waiting for the previous registration of broker ${this.brokerId} to expire`,
        );
      }
      lastCode = registered.code;
      await new Promise((r) => setTimeout(r, REGISTRATION_RETRY_MS));
    }
  }

  /**
   * After the ZooKeeper session expired and a new one was opened: register again (a new broker epoch), let the
   * controller run for election on the new session, and watch config changes again (watches died with it).
   */
  private async sessionRenewed(): Promise<void> {
    const store = this.store;
    // A broker that is stopping does not come back: no new registration, no election. One still starting
    // registers in register(), which retries on the new session.
    if (store === null || this.registration === null || !this.registered || this.stopping !== null) return;
    const registered = await registerBroker(store, {
      ...this.registration,
      timestampMs: this.options.clock.nowMs(),
    });
    if (!registered.ok) throw new Error(`re-registration failed: ${registered.reason}`);
    this.brokerEpoch = registered.value.brokerEpoch;
    if (this.controllerRequests !== null) this.controllerRequests.brokerEpoch = registered.value.brokerEpoch;
    if (this.isrManager !== null) this.isrManager.brokerEpoch = registered.value.brokerEpoch;
    this.controller?.restart(store);
    void this.watchOwnRegistration();
    await this.dynamicConfig?.start();
    await this.authorizer?.start();
    await this.delegationTokens?.start();
    this.options.logger.info(`registered again with broker epoch ${registered.value.brokerEpoch}`);
  }

  /**
   * The controller fences a broker whose listener refused its liveness probes by deleting the registration
   * (src/controller/liveness-probe.ts). A broker that sees its own registration deleted while its session lives
   * was wrongly taken for dead (or came back from a pause): it registers again with a new broker epoch, as after
   * a session expiry, and the controller sends it the state again. Its old epoch stays fenced.
   */
  private async watchOwnRegistration(): Promise<void> {
    const store = this.store;
    if (store === null || this.stopping !== null) return;
    const path = brokerPath(this.brokerId);
    const watched = await store.exists(path, this.ownRegistrationWatcher);
    if (!watched.ok || watched.value !== null || this.stopping !== null || this.store !== store) return;
    if (this.registration === null || this.logDirFailed) return;
    this.options.logger.warn(
      'this broker registration was deleted (fenced by the controller); registering again',
    );
    const registered = await registerBroker(store, {
      ...this.registration,
      timestampMs: this.options.clock.nowMs(),
    });
    if (!registered.ok) {
      this.options.logger.error(`registering again failed: ${registered.reason}`);
      return;
    }
    this.brokerEpoch = registered.value.brokerEpoch;
    if (this.controllerRequests !== null) this.controllerRequests.brokerEpoch = registered.value.brokerEpoch;
    if (this.isrManager !== null) this.isrManager.brokerEpoch = registered.value.brokerEpoch;
  }

  /** One function, so that the store keeps one watch however often it is set again. */
  private readonly ownRegistrationWatcher = (): void => void this.watchOwnRegistration();

  stop(): Promise<void> {
    this.stopping ??= this.runStop();
    return this.stopping;
  }

  private async runStop(): Promise<void> {
    const { logger } = this.options;
    // A stop during start-up (SIGTERM while recovering logs) lets the start finish or fail first, so that
    // nothing it creates is left running after the stop.
    await this.starting?.catch(() => {});
    // The console first: its pages get no answer from a broker that is going away, and its client must not hold
    // the listener's connections open while they drain.
    await this.webConsole?.stop();
    // From here on nothing starts: no new fetchers, no controller election, no leadership taken. LeaderAndIsr
    // requests still make this broker a follower (so that its clients move to the new leaders), as in Kafka.
    this.controller?.beginShutdown();
    this.services?.replicas.beginShutdown();
    this.fetchers?.beginShutdown();
    await this.moveLeadershipAway();
    // Parked JoinGroup and SyncGroup requests may wait minutes (a rebalance timeout): they are answered with
    // NOT_COORDINATOR first, so that draining the connections does not wait for them.
    if (this.groupTicker !== null) clearInterval(this.groupTicker);
    this.groupCoordinator?.shutdown();
    if (this.transactions !== null) clearInterval(this.transactions.ticker);
    this.transactions?.coordinator.shutdown();
    this.markers?.close();
    if (this.services !== null) closeTxnVerification(this.services);
    this.certificateReloader?.stop();
    await this.server?.shutdown();
    this.isrManager?.stop();
    this.services?.producePurgatory.completeAll();
    this.services?.fetchPurgatory.completeAll();
    this.dynamicConfig?.stop();
    this.authorizer?.stop();
    this.delegationTokens?.stop();
    this.fetchers?.stop();
    this.logDirMover?.stop();
    await this.controller?.stop();
    this.wireChannel?.close();
    for (const rotation of this.keyRotations) await rotation.stop();
    try {
      this.logs?.shutdown();
    } catch (err) {
      logger.error(`closing logs failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    await this.store?.close();
    this.embeddedStore?.close();
    await this.metricsEndpoint?.stop();
    logger.info('broker stopped');
  }
}

/** The brook.encryption.* keys, for openKeyStore. */
function encryptionSettingsOf(config: BrokerConfig): EncryptionSettings {
  const v = config.values;
  return {
    enable: v.boolean('brook.encryption.enable'),
    provider: v.stringOrNull('brook.encryption.key.provider'),
    keyFile: v.stringOrNull('brook.encryption.key.file'),
    keyEnv: v.string('brook.encryption.key.env'),
    httpUrl: v.stringOrNull('brook.encryption.key.http.url'),
    httpKeyId: v.stringOrNull('brook.encryption.key.http.key.id'),
    httpToken: v.password('brook.encryption.key.http.token')?.value ?? null,
    httpTimeoutMs: v.int('brook.encryption.key.http.timeout.ms'),
  };
}

/** num.replica.fetchers in the merged broker layers (dynamic ones included), else the static value. */
function numReplicaFetchersOf(merged: ReadonlyMap<string, string>, staticValue: number): number {
  const value = Number(merged.get('num.replica.fetchers') ?? staticValue);
  // The key's validator keeps stored values at least 1; an unreadable one leaves the count as started.
  return Number.isInteger(value) && value >= 1 ? value : staticValue;
}
