// DescribeTransactions (65): the state of transactional ids coordinated here (NOT_COORDINATOR for the others,
// TRANSACTIONAL_ID_NOT_FOUND for unknown ids, INVALID_REQUEST for ""), as kafka-transactions.sh describe shows it.

import { TXN_STATE_NAMES, tpOf } from '../../coordinator/transaction/transaction-coordinator.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  DescribeTransactionsRequest,
  DescribeTransactionsResponse,
} from '../../protocol/messages/65-describe-transactions.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorize, authorizeTransactionalId, ResourceType } from '../authorization.js';

export const describeTransactionsHandler = defineHandler<
  DescribeTransactionsRequest,
  DescribeTransactionsResponse
>({
  apiKey: ApiKey.DESCRIBE_TRANSACTIONS,
  minVersion: 0,
  maxVersion: 0,
  async handle(context, request) {
    const coordinator = context.services.transactionCoordinator;
    return {
      throttleTimeMs: 0,
      transactionStates: request.transactionalIds.map((id) => {
        const empty = {
          transactionalId: id,
          transactionState: '',
          transactionTimeoutMs: 0,
          transactionStartTimeMs: -1n,
          producerId: -1n,
          producerEpoch: -1,
          topics: [],
        };
        if (!authorizeTransactionalId(context, AclOperation.DESCRIBE, id)) {
          return { ...empty, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED };
        }
        // Kafka's handleDescribeTransactions: an empty id is a malformed request, not an unknown id.
        if (id === '') return { ...empty, errorCode: ErrorCode.INVALID_REQUEST };
        const errorCode = coordinator.errorFor(id);
        if (errorCode !== ErrorCode.NONE) return { ...empty, errorCode };
        const m = coordinator.describe(id);
        if (m === undefined) return { ...empty, errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND };
        const byTopic = new Map<string, number[]>();
        const hidden = new Set<string>();
        for (const k of m.partitions) {
          const tp = tpOf(k);
          // As Kafka: only the partitions of topics the caller may describe, the others left out silently.
          if (hidden.has(tp.topic)) continue;
          if (
            !byTopic.has(tp.topic) &&
            !authorize(context, AclOperation.DESCRIBE, ResourceType.TOPIC, tp.topic, false)
          ) {
            hidden.add(tp.topic);
            continue;
          }
          byTopic.set(tp.topic, [...(byTopic.get(tp.topic) ?? []), tp.partition]);
        }
        return {
          errorCode: ErrorCode.NONE,
          transactionalId: id,
          transactionState: TXN_STATE_NAMES[m.state] ?? 'Unknown',
          transactionTimeoutMs: m.timeoutMs,
          transactionStartTimeMs: BigInt(m.startMs),
          producerId: BigInt(m.producerId),
          producerEpoch: m.producerEpoch,
          topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
        };
      }),
    };
  },
});
