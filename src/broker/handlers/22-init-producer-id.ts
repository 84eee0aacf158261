// InitProducerId (22) for idempotent producers: a fresh producer id with epoch 0 each time, as Kafka does for a
// producer without a transactional id. A transactional id goes to the transaction coordinator (a new id or a
// bumped epoch, fencing older producers; PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v4). As in Kafka, a
// producer id without an epoch, or an epoch without a producer id (v3+ fields), is an INVALID_REQUEST; a producer
// id and epoch are checked by the coordinator as Kafka's isValidProducerId does (KIP-360).

import { ErrorCode } from '../../protocol/errors.js';
import type {
  InitProducerIdRequest,
  InitProducerIdResponse,
} from '../../protocol/messages/22-init-producer-id.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import {
  AclOperation,
  authorizeAnyOfType,
  authorizeCluster,
  authorizeTransactionalId,
  ResourceType,
} from '../authorization.js';
import { fencedForVersion } from './24-add-partitions-to-txn.js';

export const initProducerIdHandler = defineHandler<InitProducerIdRequest, InitProducerIdResponse>({
  apiKey: ApiKey.INIT_PRODUCER_ID,
  minVersion: 0,
  maxVersion: 5,
  async handle(context, request) {
    if ((request.producerId === -1n) !== (request.producerEpoch === -1)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, producerId: -1n, producerEpoch: -1 };
    }
    if (request.transactionalId !== null) {
      if (!authorizeTransactionalId(context, AclOperation.WRITE, request.transactionalId)) {
        const errorCode = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        return { throttleTimeMs: 0, errorCode, producerId: -1n, producerEpoch: -1 };
      }
      const v = context.apiVersion;
      const result = await context.services.transactionCoordinator.initProducerId(
        request.transactionalId,
        request.transactionTimeoutMs,
        v >= 3 && request.producerId !== -1n
          ? { producerId: Number(request.producerId), producerEpoch: request.producerEpoch }
          : null,
      );
      return {
        throttleTimeMs: 0,
        errorCode: fencedForVersion(result.errorCode, v, 4),
        producerId: BigInt(result.producerId),
        producerEpoch: result.producerEpoch,
      };
    }
    // An idempotent producer: IDEMPOTENT_WRITE on the cluster, or WRITE on any topic (Kafka 3.x).
    if (
      !authorizeCluster(context, AclOperation.IDEMPOTENT_WRITE) &&
      !authorizeAnyOfType(context, AclOperation.WRITE, ResourceType.TOPIC)
    ) {
      const errorCode = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
      return { throttleTimeMs: 0, errorCode, producerId: -1n, producerEpoch: -1 };
    }
    const producerId = await context.services.nextProducerId();
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId: BigInt(producerId), producerEpoch: 0 };
  },
});
