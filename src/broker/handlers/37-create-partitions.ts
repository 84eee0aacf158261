// CreatePartitions (37): raises a topic's partition count, with an optional explicit assignment of the new
// partitions; resolved once the controller has propagated the new partitions.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  CreatePartitionsRequest,
  CreatePartitionsResponse,
} from '../../protocol/messages/37-create-partitions.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeTopic } from '../authorization.js';

export const createPartitionsHandler = defineHandler<CreatePartitionsRequest, CreatePartitionsResponse>({
  apiKey: ApiKey.CREATE_PARTITIONS,
  minVersion: 0,
  maxVersion: 3,
  async handle(context, request) {
    // Kafka's check: ALTER on each topic.
    const allowed = request.topics.filter((t) => authorizeTopic(context, AclOperation.ALTER, t.name));
    const denied = request.topics
      .filter((t) => !allowed.includes(t))
      .map((t) => ({ name: t.name, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: null }));
    const results = await context.services.topicAdmin.createPartitions(
      allowed.map((t) => ({
        name: t.name,
        count: t.count,
        assignments: t.assignments === null ? null : t.assignments.map((a) => a.brokerIds),
      })),
      request.validateOnly,
    );
    return {
      throttleTimeMs: 0,
      results: [
        ...results.map((r) => ({ name: r.name, errorCode: r.errorCode, errorMessage: r.errorMessage })),
        ...denied,
      ],
    };
  },
});
