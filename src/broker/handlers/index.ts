// The handler table: every API this broker answers, with the versions it implements. ApiVersions advertises
// exactly this table.

import type { ApiHandler } from '../api-handler.js';
import { produceHandler } from './00-produce.js';
import { fetchHandler } from './01-fetch.js';
import { listOffsetsHandler } from './02-list-offsets.js';
import { metadataHandler } from './03-metadata.js';
import { leaderAndIsrHandler } from './04-leader-and-isr.js';
import { stopReplicaHandler } from './05-stop-replica.js';
import { updateMetadataHandler } from './06-update-metadata.js';
import { controlledShutdownHandler } from './07-controlled-shutdown.js';
import { offsetCommitHandler } from './08-offset-commit.js';
import { offsetFetchHandler } from './09-offset-fetch.js';
import { findCoordinatorHandler } from './10-find-coordinator.js';
import { joinGroupHandler } from './11-join-group.js';
import { heartbeatHandler } from './12-heartbeat.js';
import { leaveGroupHandler } from './13-leave-group.js';
import { syncGroupHandler } from './14-sync-group.js';
import { describeGroupsHandler } from './15-describe-groups.js';
import { listGroupsHandler } from './16-list-groups.js';
import { saslHandshakeHandler } from './17-sasl-handshake.js';
import { apiVersionsHandler } from './18-api-versions.js';
import { createTopicsHandler } from './19-create-topics.js';
import { deleteTopicsHandler } from './20-delete-topics.js';
import { deleteRecordsHandler } from './21-delete-records.js';
import { initProducerIdHandler } from './22-init-producer-id.js';
import { offsetForLeaderEpochHandler } from './23-offset-for-leader-epoch.js';
import { addPartitionsToTxnHandler } from './24-add-partitions-to-txn.js';
import { addOffsetsToTxnHandler } from './25-add-offsets-to-txn.js';
import { endTxnHandler } from './26-end-txn.js';
import { writeTxnMarkersHandler } from './27-write-txn-markers.js';
import { txnOffsetCommitHandler } from './28-txn-offset-commit.js';
import { describeAclsHandler } from './29-describe-acls.js';
import { createAclsHandler } from './30-create-acls.js';
import { deleteAclsHandler } from './31-delete-acls.js';
import { describeConfigsHandler } from './32-describe-configs.js';
import { alterConfigsHandler } from './33-alter-configs.js';
import { alterReplicaLogDirsHandler } from './34-alter-replica-log-dirs.js';
import { describeLogDirsHandler } from './35-describe-log-dirs.js';
import { saslAuthenticateHandler } from './36-sasl-authenticate.js';
import { createPartitionsHandler } from './37-create-partitions.js';
import { createDelegationTokenHandler } from './38-create-delegation-token.js';
import { renewDelegationTokenHandler } from './39-renew-delegation-token.js';
import { expireDelegationTokenHandler } from './40-expire-delegation-token.js';
import { describeDelegationTokenHandler } from './41-describe-delegation-token.js';
import { deleteGroupsHandler } from './42-delete-groups.js';
import { electLeadersHandler } from './43-elect-leaders.js';
import { incrementalAlterConfigsHandler } from './44-incremental-alter-configs.js';
import { alterPartitionReassignmentsHandler } from './45-alter-partition-reassignments.js';
import { listPartitionReassignmentsHandler } from './46-list-partition-reassignments.js';
import { offsetDeleteHandler } from './47-offset-delete.js';
import { describeClientQuotasHandler } from './48-describe-client-quotas.js';
import { alterClientQuotasHandler } from './49-alter-client-quotas.js';
import { describeUserScramCredentialsHandler } from './50-describe-user-scram-credentials.js';
import { alterUserScramCredentialsHandler } from './51-alter-user-scram-credentials.js';
import { alterPartitionHandler } from './56-alter-partition.js';
import { describeClusterHandler } from './60-describe-cluster.js';
import { describeProducersHandler } from './61-describe-producers.js';
import { describeTransactionsHandler } from './65-describe-transactions.js';
import { listTransactionsHandler } from './66-list-transactions.js';
import { consumerGroupHeartbeatHandler } from './68-consumer-group-heartbeat.js';
import { consumerGroupDescribeHandler } from './69-consumer-group-describe.js';

export const HANDLERS: readonly ApiHandler[] = [
  produceHandler,
  fetchHandler,
  listOffsetsHandler,
  metadataHandler,
  leaderAndIsrHandler,
  stopReplicaHandler,
  updateMetadataHandler,
  controlledShutdownHandler,
  offsetCommitHandler,
  offsetFetchHandler,
  findCoordinatorHandler,
  joinGroupHandler,
  heartbeatHandler,
  leaveGroupHandler,
  syncGroupHandler,
  describeGroupsHandler,
  listGroupsHandler,
  saslHandshakeHandler,
  apiVersionsHandler,
  createTopicsHandler,
  deleteTopicsHandler,
  deleteRecordsHandler,
  initProducerIdHandler,
  offsetForLeaderEpochHandler,
  addPartitionsToTxnHandler,
  addOffsetsToTxnHandler,
  endTxnHandler,
  writeTxnMarkersHandler,
  txnOffsetCommitHandler,
  describeAclsHandler,
  createAclsHandler,
  deleteAclsHandler,
  describeConfigsHandler,
  alterConfigsHandler,
  alterReplicaLogDirsHandler,
  describeLogDirsHandler,
  saslAuthenticateHandler,
  createPartitionsHandler,
  createDelegationTokenHandler,
  renewDelegationTokenHandler,
  expireDelegationTokenHandler,
  describeDelegationTokenHandler,
  deleteGroupsHandler,
  incrementalAlterConfigsHandler,
  offsetDeleteHandler,
  describeClientQuotasHandler,
  alterClientQuotasHandler,
  electLeadersHandler,
  alterPartitionReassignmentsHandler,
  listPartitionReassignmentsHandler,
  describeUserScramCredentialsHandler,
  alterUserScramCredentialsHandler,
  alterPartitionHandler,
  describeClusterHandler,
  consumerGroupHeartbeatHandler,
  consumerGroupDescribeHandler,
  describeProducersHandler,
  describeTransactionsHandler,
  listTransactionsHandler,
];
