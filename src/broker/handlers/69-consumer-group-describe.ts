// ConsumerGroupDescribe (69): state, epochs, assignor and members (with current and target assignments) of
// KIP-848 consumer groups. A group that is not one answers GROUP_ID_NOT_FOUND.

import type { TopicPartitions } from '../../coordinator/group/consumer-group.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  ConsumerGroupDescribeRequest,
  ConsumerGroupDescribeResponse,
  ConsumerGroupDescribeResponseAssignment,
} from '../../protocol/messages/69-consumer-group-describe.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizedOperations, authorizeGroup } from '../authorization.js';

export const consumerGroupDescribeHandler = defineHandler<
  ConsumerGroupDescribeRequest,
  ConsumerGroupDescribeResponse
>({
  apiKey: ApiKey.CONSUMER_GROUP_DESCRIBE,
  minVersion: 0,
  maxVersion: 0,
  handle(context, request) {
    const coordinator = context.services.groupCoordinator;
    return {
      throttleTimeMs: 0,
      groups: request.groupIds.map((groupId) => {
        const described = coordinator.describeConsumerGroup(groupId);
        // Kafka's check: DESCRIBE on the group; a refused group is described as an empty one with the error.
        const denied = !authorizeGroup(context, AclOperation.DESCRIBE, groupId);
        const errorCode = denied ? ErrorCode.GROUP_AUTHORIZATION_FAILED : described.errorCode;
        const group = denied ? undefined : described.group;
        const topicName = described.topicName;
        const wire = (tp: TopicPartitions): ConsumerGroupDescribeResponseAssignment => ({
          topicPartitions: [...tp].map(([topicId, partitions]) => ({
            topicId,
            topicName: topicName(topicId),
            partitions: [...partitions].sort((a, b) => a - b),
          })),
        });
        return {
          errorCode,
          errorMessage: null,
          groupId,
          groupState: group?.state ?? 'Dead',
          groupEpoch: group?.groupEpoch ?? -1,
          assignmentEpoch: group?.assignmentEpoch ?? -1,
          assignorName: group?.assignorName ?? '',
          members: [...(group?.members.values() ?? [])].map((m) => ({
            memberId: m.memberId,
            instanceId: m.instanceId,
            rackId: m.rackId,
            memberEpoch: m.memberEpoch,
            clientId: m.clientId,
            clientHost: m.clientHost,
            subscribedTopicNames: [...m.subscribedTopicNames],
            subscribedTopicRegex: null,
            assignment: wire(m.assigned),
            targetAssignment: wire(group!.target.get(m.memberId) ?? new Map()),
          })),
          authorizedOperations: authorizedOperations(
            context,
            'group',
            groupId,
            request.includeAuthorizedOperations && errorCode === ErrorCode.NONE,
          ),
        };
      }),
    };
  },
});
