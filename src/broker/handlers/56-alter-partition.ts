// AlterPartition (56): a leader's ISR change, handled by the controller when it runs on this broker
// (NOT_CONTROLLER otherwise, and the leader retries against the new controller).

import type {
  AlterPartitionRequest,
  AlterPartitionResponse,
} from '../../protocol/messages/56-alter-partition.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';

export const alterPartitionHandler = defineHandler<AlterPartitionRequest, AlterPartitionResponse>({
  apiKey: ApiKey.ALTER_PARTITION,
  minVersion: 0,
  maxVersion: 3,
  handle(context, request) {
    return context.services.controller.alterPartition(request, context.apiVersion);
  },
});
