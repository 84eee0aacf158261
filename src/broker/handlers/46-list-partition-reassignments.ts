// ListPartitionReassignments (46): the reassignments in progress, with their adding and removing replicas. Only
// the controller knows them; another broker answers NOT_CONTROLLER, as in Kafka.

import type {
  ListPartitionReassignmentsRequest,
  ListPartitionReassignmentsResponse,
} from '../../protocol/messages/46-list-partition-reassignments.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';

export const listPartitionReassignmentsHandler = defineHandler<
  ListPartitionReassignmentsRequest,
  ListPartitionReassignmentsResponse
>({
  apiKey: ApiKey.LIST_PARTITION_REASSIGNMENTS,
  minVersion: 0,
  maxVersion: 0,
  handle(context, request) {
    return context.services.controller.listPartitionReassignments(request);
  },
});
