// The herder's contract: everything the REST API asks of a Connect cluster (Kafka's Herder interface), in
// Kafka Connect's JSON shapes. The standalone herder implements it for one worker; the distributed herder
// (distributed/distributed-herder.ts) implements the same contract over the internal topics.

import type { TaskConfig } from '../api/connector.js';
import type { RequestSignature } from './distributed/request-signature.js';
import type { LoggerLevel } from './loggers.js';
import type { TargetState } from './status.js';

export interface ConnectorTaskId {
  connector: string;
  task: number;
}

export interface ConnectorInfo {
  name: string;
  config: Record<string, string>;
  tasks: ConnectorTaskId[];
  type: 'source' | 'sink' | 'unknown';
}

export interface StateInfo {
  state: string;
  worker_id: string;
  trace?: string;
}

export interface TaskStateInfo extends StateInfo {
  id: number;
}

export interface ConnectorStateInfo {
  name: string;
  connector: StateInfo;
  tasks: TaskStateInfo[];
  type: 'source' | 'sink' | 'unknown';
}

export interface TaskInfo {
  id: ConnectorTaskId;
  config: TaskConfig;
}

export interface ConfigKeyInfo {
  name: string;
  type: string;
  required: boolean;
  default_value: string | null;
  importance: string;
  documentation: string;
  group: string | null;
  width: string;
  display_name: string;
  dependents: string[];
  order: number;
}

export interface ConfigValueInfo {
  name: string;
  value: string | null;
  recommended_values: string[];
  errors: string[];
  visible: boolean;
}

export interface ConfigInfos {
  name: string;
  error_count: number;
  groups: string[];
  /** A value of no defined key has no definition (null), as Kafka's AbstractHerder.generateResult answers it. */
  configs: { definition: ConfigKeyInfo | null; value: ConfigValueInfo }[];
}

export interface PluginInfo {
  class: string;
  type: string;
  version?: string;
}

export interface ConnectorOffset {
  partition: Record<string, unknown>;
  offset: Record<string, unknown> | null;
}

export interface RestartRequest {
  includeTasks: boolean;
  onlyFailed: boolean;
}

export interface Herder {
  workerId(): string;
  /**
   * KIP-1017: whether the worker has completed its startup (Kafka's Herder.isReady): standalone, once the connectors
   * given on the command line are created; distributed, once its work loop has read the internal topics and joined.
   */
  isReady(): boolean;
  /**
   * KIP-1017: resolves once the worker can serve a request (Kafka's Herder.healthCheck): after its startup, and in
   * distributed mode through its work loop, so that a loop that is stuck leaves it pending. GET /health bounds it.
   */
  healthCheck(): Promise<void>;
  kafkaClusterId(): Promise<string | null>;
  connectors(): string[];
  connectorInfo(name: string): ConnectorInfo;
  connectorConfig(name: string): Record<string, string>;
  /** created is false when an existing connector was updated. */
  putConnectorConfig(
    name: string,
    config: Record<string, string>,
    allowReplace: boolean,
    initialState?: TargetState,
  ): Promise<{ created: boolean; info: ConnectorInfo }>;
  deleteConnector(name: string): Promise<void>;
  connectorStatus(name: string): ConnectorStateInfo;
  taskStatus(name: string, task: number): TaskStateInfo;
  taskConfigs(name: string): TaskInfo[];
  connectorActiveTopics(name: string): string[];
  resetConnectorActiveTopics(name: string): void;
  restartConnector(name: string, request: RestartRequest): Promise<ConnectorStateInfo | null>;
  restartTask(name: string, task: number): Promise<void>;
  pauseConnector(name: string): Promise<void>;
  resumeConnector(name: string): Promise<void>;
  stopConnector(name: string): Promise<void>;
  connectorOffsets(name: string): Promise<ConnectorOffset[]>;
  alterConnectorOffsets(name: string, offsets: ConnectorOffset[] | null): Promise<string>;
  validateConnectorConfig(config: Record<string, string>): Promise<ConfigInfos>;
  connectorPlugins(connectorsOnly: boolean): PluginInfo[];
  /** KIP-495: a logger's level on this worker, null for an unknown logger (loggers.ts). */
  loggerLevel(name: string): LoggerLevel | null;
  allLoggerLevels(): Record<string, LoggerLevel>;
  /** Sets a level on this worker; the names of the loggers it applies to. */
  setWorkerLoggerLevel(namespace: string, level: string): string[];
  /** KIP-976 `scope=cluster`: sets a level on every worker of the cluster (standalone: this worker). */
  setClusterLoggerLevel(namespace: string, level: string): Promise<void>;
  pluginConfig(pluginName: string): ConfigKeyInfo[];
  /** Distributed mode only: task configs a connector's worker hands to the leader (POST /connectors/{name}/tasks). */
  putTaskConfigs?(name: string, configs: TaskConfig[], signature?: RequestSignature): Promise<void>;
  /**
   * Distributed mode only (KIP-618): fences the transactional producers of a source connector's older task
   * generations and records the new task count (PUT /connectors/{name}/fence, on the leader).
   */
  fenceZombies?(name: string, signature?: RequestSignature): Promise<void>;
  /**
   * Distributed mode only: throws RebalanceNeededException while a config change this worker read needs a
   * rebalance it has not yet asked for (Kafka's checkRebalanceNeeded, run by the requests Kafka runs it for).
   */
  checkRebalanceNeeded?(): void;
  stop(): Promise<void>;
}
