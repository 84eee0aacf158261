// CreatePartitions (37): raises a topic's partition count, with an optional explicit assignment of the new
// partitions; resolved once the controller has propagated the new partitions.

import type {
  CreatePartitionsRequest,
  CreatePartitionsResponse,
} from '../../protocol/messages/37-create-partitions.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';

export const createPartitionsHandler = defineHandler<CreatePartitionsRequest, CreatePartitionsResponse>({
  apiKey: ApiKey.CREATE_PARTITIONS,
  minVersion: 0,
  maxVersion: 3,
  async handle(context, request) {
    const results = await context.services.topicAdmin.createPartitions(
      request.topics.map((t) => ({
        name: t.name,
        count: t.count,
        assignments: t.assignments === null ? null : t.assignments.map((a) => a.brokerIds),
      })),
      request.validateOnly,
    );
    return {
      throttleTimeMs: 0,
      results: results.map((r) => ({ name: r.name, errorCode: r.errorCode, errorMessage: r.errorMessage })),
    };
  },
});
