// What request handlers can reach: the broker's services, built once by the Broker and shared read-only.

import type { Clock } from '../common/clock.js';
import type { LogLevels } from '../common/log-levels.js';
import type { Logger } from '../common/logger.js';
import type { Controller } from '../controller/controller.js';
import type { TopicAdmin } from '../controller/topic-admin.js';
import type { GroupCoordinator } from '../coordinator/group/group-coordinator.js';
import type { TransactionCoordinator } from '../coordinator/transaction/transaction-coordinator.js';
import type { BrokerTopicStats } from '../metrics/topic-stats.js';
import type { ApiVersionsResponseApiVersion } from '../protocol/messages/18-api-versions.js';
import type { AclAuthorizer } from '../security/authorizer/authorizer.js';
import type { DelegationTokenManager } from '../security/delegation-token/token-manager.js';
import type { InterBrokerSecurity } from '../security/inter-broker.js';
import type { SaslAuthenticator } from '../security/sasl/authenticator.js';
import type { LogDirs } from '../storage/log-dirs.js';
import type { ControllerRequests } from './cluster/controller-requests.js';
import type { BrokerConfig } from './config/broker-config.js';
import type { DynamicConfig } from './dynamic-config.js';
import type { FetchSessionCache } from './fetch-session-cache.js';
import type { MetadataCache } from './metadata/metadata-cache.js';
import type { Purgatory } from './purgatory.js';
import type { ClientQuotas } from './quota/client-quotas.js';
import type { ReplicationQuota } from './quota/replication-quota.js';
import type { LeadershipConfirmations } from './replica/leadership-confirmations.js';
import type { LogDirMover } from './replica/log-dir-mover.js';
import type { ReplicaManager } from './replica/replica-manager.js';
import type { TopicConfigs } from './topic-configs.js';
import type { ZooKeeperConsumerOffsets } from './zookeeper-consumer-offsets.js';

export interface BrokerServices {
  /** SASL handshakes and authentication of connections on SASL listeners. */
  readonly sasl: SaslAuthenticator;
  /** TLS and SASL of this broker's own connections to other brokers (transaction markers and the like). */
  readonly interBrokerSecurity: InterBrokerSecurity;
  readonly brokerId: number;
  /** The ACL authorizer when authorizer.class.name turns it on; null: every operation is allowed. */
  readonly authorizer: AclAuthorizer | null;
  /** Delegation tokens (KIP-48); disabled, answering DELEGATION_TOKEN_AUTH_DISABLED, without a secret key. */
  readonly delegationTokens: DelegationTokenManager;
  readonly config: BrokerConfig;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The levels the broker's loggers obey, for BROKER_LOGGER resources (KIP-412). */
  readonly logLevels: LogLevels;
  readonly metadata: MetadataCache;
  readonly topicConfigs: TopicConfigs;
  /** Writes and watches dynamic topic and broker configs in the coordination store. */
  readonly dynamicConfig: DynamicConfig;
  readonly replicas: ReplicaManager;
  /** Client quotas (producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate). */
  readonly quotas: ClientQuotas;
  /** leader.replication.throttled.rate and the throttled replicas of each topic, for follower fetches served here. */
  readonly leaderReplicationQuota: ReplicationQuota;
  /** LeaderAndIsr, UpdateMetadata and StopReplica, from the local controller or over the wire. */
  readonly controllerRequests: ControllerRequests;
  /** The log directories (JBOD), their placement and their failures. */
  readonly logs: LogDirs;
  /** Moves of replicas between log directories (AlterReplicaLogDirs). */
  readonly logDirMover: LogDirMover;
  /** CreateTopics, DeleteTopics, CreatePartitions: written to the coordination store, then propagated. */
  readonly topicAdmin: TopicAdmin;
  /** This broker's controller instance (active or standing by): AlterPartition, ControlledShutdown, ElectLeaders. */
  readonly controller: Controller;
  /**
   * Metadata's auto-creation with the broker defaults; failures are only logged, as in Kafka. Answers the names
   * this call created (not those that existed already or failed).
   */
  autoCreateTopics(names: readonly string[]): Promise<readonly string[]>;
  readonly fetchSessions: FetchSessionCache;
  /** Produce requests with acks=all waiting for the high watermark. */
  readonly producePurgatory: Purgatory;
  /** Fetch requests waiting for fetch.min.bytes. */
  readonly fetchPurgatory: Purgatory;
  /** Reads that must not come from a deposed leader wait here for its followers to confirm it (stable OffsetFetch, read_committed ListOffsets). */
  readonly leadershipConfirmations: LeadershipConfirmations;
  /** What ApiVersions advertises: the handler table's keys and version ranges. */
  readonly apiVersions: ApiVersionsResponseApiVersion[];
  /** Classic consumer groups and their committed offsets, for the partitions of __consumer_offsets led here. */
  readonly groupCoordinator: GroupCoordinator;
  /** OffsetCommit v0 and OffsetFetch v0: offsets kept in the coordination store, as Kafka keeps them in ZooKeeper. */
  readonly zooKeeperConsumerOffsets: ZooKeeperConsumerOffsets;
  /** Transactions whose transactional ids map to the partitions of __transaction_state led here. */
  readonly transactionCoordinator: TransactionCoordinator;
  /** BrokerTopicMetrics counters for produce and fetch when brook.metrics.listener is set; null otherwise. */
  readonly topicStats: BrokerTopicStats | null;
  /** Allocates producer ids for InitProducerId. */
  nextProducerId(): Promise<number>;
}

/**
 * A partition changed in a way waiting requests may care about (an append was written, its high watermark moved,
 * its leadership changed): the acks=all writes and the fetches waiting on it look again, as Kafka's
 * tryCompleteDelayedRequests does.
 */
export function completeDelayedRequests(
  purgatories: Pick<BrokerServices, 'producePurgatory' | 'fetchPurgatory'>,
  partitionKey: string,
): void {
  purgatories.producePurgatory.checkAndComplete(partitionKey);
  purgatories.fetchPurgatory.checkAndComplete(partitionKey);
}
