// OffsetDelete (47): removes committed offsets of a group, except for topics the group's members subscribe to
// (GROUP_SUBSCRIBED_TO_TOPIC).

import { ErrorCode } from '../../protocol/errors.js';
import type { OffsetDeleteRequest, OffsetDeleteResponse } from '../../protocol/messages/47-offset-delete.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeGroup, authorizeTopic } from '../authorization.js';

export const offsetDeleteHandler = defineHandler<OffsetDeleteRequest, OffsetDeleteResponse>({
  apiKey: ApiKey.OFFSET_DELETE,
  minVersion: 0,
  maxVersion: 0,
  async handle(context, request) {
    // Kafka's checks: DELETE on the group, then READ on each topic (TOPIC_AUTHORIZATION_FAILED in its partitions).
    if (!authorizeGroup(context, AclOperation.DELETE, request.groupId)) {
      return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, throttleTimeMs: 0, topics: [] };
    }
    const allowed = request.topics.filter((t) => authorizeTopic(context, AclOperation.READ, t.name));
    const result = await context.services.groupCoordinator.deleteOffsets(request.groupId, allowed);
    if (allowed.length === request.topics.length) {
      return { errorCode: result.errorCode, throttleTimeMs: 0, topics: result.topics };
    }
    const denied = request.topics
      .filter((t) => !allowed.includes(t))
      .map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partitionIndex,
          errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        })),
      }));
    return { errorCode: result.errorCode, throttleTimeMs: 0, topics: [...result.topics, ...denied] };
  },
});
