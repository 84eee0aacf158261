// InitProducerId (22) for idempotent producers: a fresh producer id with epoch 0 each time, as Kafka does for a
// producer without a transactional id. Transactional ids need the transaction coordinator, which Brook does
// not have yet: they are answered with COORDINATOR_NOT_AVAILABLE, so clients report it rather than misbehave.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  InitProducerIdRequest,
  InitProducerIdResponse,
} from '../../protocol/messages/22-init-producer-id.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';

export const initProducerIdHandler = defineHandler<InitProducerIdRequest, InitProducerIdResponse>({
  apiKey: ApiKey.INIT_PRODUCER_ID,
  minVersion: 0,
  maxVersion: 5,
  async handle(context, request) {
    if (request.transactionalId !== null) {
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE,
        producerId: -1n,
        producerEpoch: -1,
      };
    }
    const producerId = await context.services.nextProducerId();
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId: BigInt(producerId), producerEpoch: 0 };
  },
});
