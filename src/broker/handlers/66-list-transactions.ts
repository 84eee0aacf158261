// ListTransactions (66): the transactional ids coordinated by this broker, filtered by state names and producer
// ids (v1: and by how long they have been running). Unknown state names are echoed back, as in Kafka; while a
// partition of __transaction_state led here loads, the whole answer is COORDINATOR_LOAD_IN_PROGRESS.

import { TXN_STATE_NAMES } from '../../coordinator/transaction/transaction-coordinator.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  ListTransactionsRequest,
  ListTransactionsResponse,
} from '../../protocol/messages/66-list-transactions.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorize, ResourceType } from '../authorization.js';

export const listTransactionsHandler = defineHandler<ListTransactionsRequest, ListTransactionsResponse>({
  apiKey: ApiKey.LIST_TRANSACTIONS,
  minVersion: 0,
  maxVersion: 1,
  async handle(context, request) {
    const coordinator = context.services.transactionCoordinator;
    const errorCode = coordinator.listError();
    // Kafka answers a loading or stopped coordinator with the error alone; admin clients retry it.
    if (errorCode !== ErrorCode.NONE) {
      return { throttleTimeMs: 0, errorCode, unknownStateFilters: [], transactionStates: [] };
    }
    const known = new Set<string>(TXN_STATE_NAMES);
    const unknownStateFilters = request.stateFilters.filter((s) => !known.has(s));
    const durationMs = context.apiVersion >= 1 ? Number(request.durationFilter) : -1;
    const nowMs = context.services.clock.nowMs();
    const producerIds = request.producerIdFilters.map(Number);
    const transactionStates = coordinator
      .list(request.stateFilters, producerIds)
      // Kafka keeps an id when now - start > d, so an id with no start time (-1) always passes a filter.
      .filter((t) => durationMs < 0 || nowMs - t.startMs > durationMs)
      // Kafka lists only the transactional ids the principal may describe.
      .filter((t) => authorize(context, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, t.id, false))
      .map((t) => ({ transactionalId: t.id, producerId: BigInt(t.producerId), transactionState: t.state }));
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, unknownStateFilters, transactionStates };
  },
});
