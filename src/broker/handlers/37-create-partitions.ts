// CreatePartitions (37): raises a topic's partition count, with an optional explicit assignment of the new
// partitions; answered once this broker's metadata shows them with leaders, or REQUEST_TIMED_OUT when the
// request's timeout_ms passes first (the change goes on), at once for a timeout of 0 or less (REQUEST_TIMED_OUT for
// every topic changed, as Kafka).

import { ErrorCode } from '../../protocol/errors.js';
import type {
  CreatePartitionsRequest,
  CreatePartitionsResponse,
} from '../../protocol/messages/37-create-partitions.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeTopic } from '../authorization.js';
import { mutationQuota, THROTTLING_QUOTA_EXCEEDED_MESSAGE } from '../quota/controller-mutations.js';

export const createPartitionsHandler = defineHandler<CreatePartitionsRequest, CreatePartitionsResponse>({
  apiKey: ApiKey.CREATE_PARTITIONS,
  minVersion: 0,
  maxVersion: 3,
  async handle(context, request) {
    // Kafka's check: ALTER on each topic.
    const authorized = request.topics.filter((t) => authorizeTopic(context, AclOperation.ALTER, t.name));
    const denied: { name: string; errorCode: number; errorMessage: string | null }[] = request.topics
      .filter((t) => !authorized.includes(t))
      .map((t) => ({ name: t.name, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: null }));
    // Each new partition is a mutation (KIP-599); a topic refused by the quota is answered and not changed.
    const quota = mutationQuota(context, 3);
    const allowed = authorized.filter((t) => {
      const current = context.services.metadata.topic(t.name)?.partitions.length ?? t.count;
      if (request.validateOnly || quota.record(Math.max(0, t.count - current))) return true;
      denied.push({
        name: t.name,
        errorCode: ErrorCode.THROTTLING_QUOTA_EXCEEDED,
        errorMessage: THROTTLING_QUOTA_EXCEEDED_MESSAGE,
      });
      return false;
    });
    const results = await context.services.topicAdmin.createPartitions(
      allowed.map((t) => ({
        name: t.name,
        count: t.count,
        assignments: t.assignments === null ? null : t.assignments.map((a) => a.brokerIds),
      })),
      request.validateOnly,
      request.timeoutMs,
    );
    quota.finish();
    return {
      throttleTimeMs: 0,
      results: [
        ...results.map((r) => ({ name: r.name, errorCode: r.errorCode, errorMessage: r.errorMessage })),
        ...denied,
      ],
    };
  },
});
