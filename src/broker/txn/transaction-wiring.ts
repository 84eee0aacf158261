// Builds the broker's transaction coordinator: __transaction_state partitions through partitionGroupStorage (the
// same acks=-1 leader appends as the group coordinator), loading on leadership, the topic created on first use
// with transaction.state.log.replication.factor and .min.isr as configured, and markers written by markerWriter
// once services exist.

import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import type { TopicAdmin } from '../../controller/topic-admin.js';
import { partitionGroupStorage } from '../../coordinator/group/group-storage.js';
import {
  type MarkerFailure,
  type MarkerRequest,
  TRANSACTION_STATE_TOPIC,
  TransactionCoordinator,
} from '../../coordinator/transaction/transaction-coordinator.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { BrokerConfig } from '../config/broker-config.js';
import type { MetadataCache } from '../metadata/metadata-cache.js';
import type { Purgatory } from '../purgatory.js';
import type { ReplicaManager } from '../replica/replica-manager.js';
import { internalTopicAppender } from '../replica/replicated-append.js';

export const TXN_TICK_MS = 100;

export interface TransactionWiring {
  readonly coordinator: TransactionCoordinator;
  /** Set once the broker's services exist. */
  writeMarkers: ((request: MarkerRequest) => Promise<MarkerFailure[]>) | null;
  readonly ticker: NodeJS.Timeout;
}

export function createTransactionCoordinator(deps: {
  config: BrokerConfig;
  clock: Clock;
  logger: Logger;
  replicas: ReplicaManager;
  metadata: MetadataCache;
  topicAdmin: TopicAdmin;
  producePurgatory: Purgatory;
  nextProducerId: () => Promise<number>;
}): TransactionWiring {
  const { config, clock, logger, replicas, metadata, topicAdmin } = deps;
  const wiring: { writeMarkers: TransactionWiring['writeMarkers'] } = { writeMarkers: null };
  const coordinator = new TransactionCoordinator({
    clock,
    logger: logger.child('transactions'),
    storage: partitionGroupStorage({
      partition: (index) => replicas.get(TRANSACTION_STATE_TOPIC, index),
      appendAsLeader: internalTopicAppender(
        { replicas, producePurgatory: deps.producePurgatory },
        TRANSACTION_STATE_TOPIC,
        () => clock.nowMs(),
      ),
      compression: 0,
      commitTimeoutMs: config.offsetsCommitTimeoutMs,
      loadBufferBytes: config.transactionStateLogLoadBufferSize,
      nowMs: () => clock.nowMs(),
    }),
    partitionCount: () =>
      metadata.topic(TRANSACTION_STATE_TOPIC)?.partitions.length ?? config.transactionStateLogNumPartitions,
    nextProducerId: deps.nextProducerId,
    maxTimeoutMs: config.transactionMaxTimeoutMs,
    abortIntervalMs: config.transactionAbortTimedOutTransactionCleanupIntervalMs,
    transactionalIdExpirationMs: config.transactionalIdExpirationMs,
    removeExpiredIntervalMs: config.transactionRemoveExpiredTransactionCleanupIntervalMs,
    writeMarkers: (request) =>
      wiring.writeMarkers === null
        ? Promise.resolve(
            request.partitions.map((tp) => ({ ...tp, errorCode: ErrorCode.BROKER_NOT_AVAILABLE })),
          )
        : wiring.writeMarkers(request),
    coordinatorEpoch: (index) => replicas.get(TRANSACTION_STATE_TOPIC, index)?.leaderEpoch ?? -1,
    partitionExists: (topic, partition) => metadata.partition(topic, partition) !== undefined,
    // As Kafka (AutoTopicCreationManager), neither the replication factor nor min.insync.replicas is lowered to
    // the brokers alive now: with fewer brokers than the replication factor the creation fails, FindCoordinator
    // answers COORDINATOR_NOT_AVAILABLE and clients retry until enough brokers are up. Capping it instead left a
    // cluster whose first transactional client came early with a topic of fewer replicas for good.
    createTopic: async () => {
      const [result] = await topicAdmin.createTopics(
        [
          {
            name: TRANSACTION_STATE_TOPIC,
            numPartitions: config.transactionStateLogNumPartitions,
            replicationFactor: config.transactionStateLogReplicationFactor,
            assignments: [],
            configs: {
              'cleanup.policy': 'compact',
              'compression.type': 'uncompressed',
              'min.insync.replicas': String(config.transactionStateLogMinIsr),
              'segment.bytes': String(config.transactionStateLogSegmentBytes),
              'unclean.leader.election.enable': 'false',
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
        logger.warn(`creating ${TRANSACTION_STATE_TOPIC} failed: ${result.errorMessage ?? result.errorCode}`);
      }
      return result?.errorCode === ErrorCode.NONE ? config.transactionStateLogNumPartitions : 0;
    },
  });
  replicas.onLeadershipChange((partition, isLeader) => {
    if (partition.topic === TRANSACTION_STATE_TOPIC)
      coordinator.onLeadershipChange(partition.partition, isLeader);
  });
  const ticker = setInterval(() => coordinator.tick(), TXN_TICK_MS);
  ticker.unref();
  return {
    coordinator,
    ticker,
    get writeMarkers() {
      return wiring.writeMarkers;
    },
    set writeMarkers(fn) {
      wiring.writeMarkers = fn;
    },
  };
}
