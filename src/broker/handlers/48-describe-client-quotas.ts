// DescribeClientQuotas (48): the quotas of the user, client-id and user/client-id entities a filter matches, read
// from the metadata store (Kafka's ZooKeeper-mode semantics: exact, default and specified components; strict
// leaves out entities with parts the filter does not name). A bad filter is a top-level error with no entries.
// Kafka's check: DESCRIBE_CONFIGS on the cluster, else CLUSTER_AUTHORIZATION_FAILED with no entries. A stored value
// Kafka's read throws on fails the whole describe: UNKNOWN_SERVER_ERROR without a message, the reason logged.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  DescribeClientQuotasRequest,
  DescribeClientQuotasResponse,
} from '../../protocol/messages/48-describe-client-quotas.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import { describeQuotas, entityParts, parseQuotaFilter } from '../quota/quota-requests.js';

export const describeClientQuotasHandler = defineHandler<
  DescribeClientQuotasRequest,
  DescribeClientQuotasResponse
>({
  apiKey: ApiKey.DESCRIBE_CLIENT_QUOTAS,
  minVersion: 0,
  maxVersion: 1,
  async handle(context, request) {
    if (!authorizeCluster(context, AclOperation.DESCRIBE_CONFIGS)) {
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        errorMessage: 'Cluster authorization failed.',
        entries: null,
      };
    }
    const filter = parseQuotaFilter(request.components, request.strict);
    if ('errorCode' in filter) {
      return {
        throttleTimeMs: 0,
        errorCode: filter.errorCode,
        errorMessage: filter.errorMessage,
        entries: null,
      };
    }
    const found = await describeQuotas(context.services.quotas.store, filter);
    if (!found.ok) {
      context.services.logger.warn('DescribeClientQuotas failed', { reason: found.reason });
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.UNKNOWN_SERVER_ERROR,
        // Kafka sends no message with UNKNOWN_SERVER_ERROR (ApiError.fromThrowable); a store Brook could not reach
        // is said, as its other config requests say it.
        errorMessage: found.failed === 'unreadable' ? found.reason : null,
        entries: null,
      };
    }
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      entries: found.described.map((f) => ({ entity: entityParts(f.entity), values: f.values })),
    };
  },
});
