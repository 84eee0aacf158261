// EndTxn (26): commit or abort. Answered once the coordinator has written PrepareCommit/PrepareAbort; the
// markers and the Complete record follow (a producer's next transaction waits with CONCURRENT_TRANSACTIONS).

import { ErrorCode } from '../../protocol/errors.js';
import type { EndTxnRequest, EndTxnResponse } from '../../protocol/messages/26-end-txn.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeTransactionalId } from '../authorization.js';
import { fencedForVersion } from './24-add-partitions-to-txn.js';

export const endTxnHandler = defineHandler<EndTxnRequest, EndTxnResponse>({
  apiKey: ApiKey.END_TXN,
  minVersion: 0,
  maxVersion: 3,
  async handle(context, request) {
    if (!authorizeTransactionalId(context, AclOperation.WRITE, request.transactionalId)) {
      const errorCode = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
      return { throttleTimeMs: 0, errorCode, producerId: -1n, producerEpoch: -1 };
    }
    const errorCode = await context.services.transactionCoordinator.endTransaction(
      request.transactionalId,
      Number(request.producerId),
      request.producerEpoch,
      request.committed,
    );
    return {
      throttleTimeMs: 0,
      errorCode: fencedForVersion(errorCode, context.apiVersion, 2),
      producerId: -1n,
      producerEpoch: -1,
    };
  },
});
