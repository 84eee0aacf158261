// AlterClientQuotas (49): sets or removes producer_byte_rate, consumer_byte_rate, request_percentage and
// controller_mutation_rate of user, client-id and user/client-id entities (null names: the defaults), where Kafka
// stores them, with a change notification so every broker applies them. Each entity gets its own error, with
// Kafka's messages; validate_only checks without writing. Kafka's check: ALTER_CONFIGS on the cluster, else every
// entity answers CLUSTER_AUTHORIZATION_FAILED and nothing is written.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  AlterClientQuotasRequest,
  AlterClientQuotasResponse,
} from '../../protocol/messages/49-alter-client-quotas.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import {
  alterEntityQuotas,
  isQuotaError,
  parseQuotaEntity,
  type QuotaError,
  validateQuotaOps,
} from '../quota/quota-requests.js';

const CLUSTER_DENIED: QuotaError = {
  errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
  errorMessage: 'Cluster authorization failed.',
};

export const alterClientQuotasHandler = defineHandler<AlterClientQuotasRequest, AlterClientQuotasResponse>({
  apiKey: ApiKey.ALTER_CLIENT_QUOTAS,
  minVersion: 0,
  maxVersion: 1,
  async handle(context, request) {
    const authorized = authorizeCluster(context, AclOperation.ALTER_CONFIGS);
    const store = context.services.quotas.store;
    const entries: AlterClientQuotasResponse['entries'] = [];
    for (const entry of request.entries) {
      const entity = parseQuotaEntity(entry.entity);
      let error: QuotaError | null;
      if (!authorized) error = CLUSTER_DENIED;
      else if (isQuotaError(entity)) error = entity;
      else {
        error = validateQuotaOps(entry.ops, entity);
        if (error === null && !request.validateOnly)
          error = await alterEntityQuotas(store, entity, entry.ops);
      }
      entries.push({
        errorCode: error?.errorCode ?? ErrorCode.NONE,
        errorMessage: error?.errorMessage ?? null,
        entity: entry.entity.map((e) => ({ entityType: e.entityType, entityName: e.entityName })),
      });
    }
    return { throttleTimeMs: 0, entries };
  },
});
