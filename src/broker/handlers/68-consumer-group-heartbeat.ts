// ConsumerGroupHeartbeat (68): the KIP-848 consumer group protocol. A member joins with epoch 0, leaves with -1
// (or -2, a static member's temporary leave), and otherwise reports its epoch and owned partitions; the answer
// carries its epoch and assignment (see coordinator/group/consumer-group.ts) once the change is written to
// __consumer_offsets. Answered with UNSUPPORTED_VERSION unless group.coordinator.rebalance.protocols includes
// "consumer". Version 1 (client-chosen member ids) is
// marked unstable in the specification and not advertised.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  ConsumerGroupHeartbeatRequest,
  ConsumerGroupHeartbeatResponse,
} from '../../protocol/messages/68-consumer-group-heartbeat.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeGroup, authorizeTopic } from '../authorization.js';

export const consumerGroupHeartbeatHandler = defineHandler<
  ConsumerGroupHeartbeatRequest,
  ConsumerGroupHeartbeatResponse
>({
  apiKey: ApiKey.CONSUMER_GROUP_HEARTBEAT,
  minVersion: 0,
  maxVersion: 0,
  async handle(context, request) {
    // Kafka's checks: READ on the group, then DESCRIBE on every subscribed topic.
    const refused = !authorizeGroup(context, AclOperation.READ, request.groupId)
      ? ErrorCode.GROUP_AUTHORIZATION_FAILED
      : request.subscribedTopicNames !== null &&
          !request.subscribedTopicNames.every((t) => authorizeTopic(context, AclOperation.DESCRIBE, t))
        ? ErrorCode.TOPIC_AUTHORIZATION_FAILED
        : ErrorCode.NONE;
    if (refused !== ErrorCode.NONE) {
      return {
        throttleTimeMs: 0,
        errorCode: refused,
        errorMessage: null,
        memberId: request.memberId,
        memberEpoch: -1,
        heartbeatIntervalMs: 0,
        assignment: null,
      };
    }
    const result = await context.services.groupCoordinator.consumerGroupHeartbeat({
      groupId: request.groupId,
      memberId: request.memberId,
      memberEpoch: request.memberEpoch,
      instanceId: request.instanceId,
      rackId: request.rackId,
      rebalanceTimeoutMs: request.rebalanceTimeoutMs,
      subscribedTopicNames: request.subscribedTopicNames,
      serverAssignor: request.serverAssignor,
      topicPartitions: request.topicPartitions,
      clientId: context.header.clientId ?? '',
      clientHost: `/${context.connection.remoteAddress}`,
    });
    return {
      throttleTimeMs: 0,
      errorCode: result.errorCode,
      errorMessage: result.errorMessage,
      memberId: result.memberId,
      memberEpoch: result.memberEpoch,
      heartbeatIntervalMs: result.heartbeatIntervalMs,
      assignment: result.assignment === null ? null : { topicPartitions: result.assignment },
    };
  },
});
