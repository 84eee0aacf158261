// IncrementalAlterConfigs (44): SET, DELETE, APPEND and SUBTRACT on single keys of a topic's overrides or a
// dynamic broker layer, applied to what the store holds now (read for the request, as Kafka reads ZooKeeper),
// validated, written and propagated like AlterConfigs.

import type {
  IncrementalAlterConfigsRequest,
  IncrementalAlterConfigsResponse,
} from '../../protocol/messages/44-incremental-alter-configs.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import {
  validateIncrementalBrokerConfigs,
  validateIncrementalTopicConfigs,
} from '../config/alter-validation.js';
import { alterConfigResources } from './config-change.js';

export const incrementalAlterConfigsHandler = defineHandler<
  IncrementalAlterConfigsRequest,
  IncrementalAlterConfigsResponse
>({
  apiKey: ApiKey.INCREMENTAL_ALTER_CONFIGS,
  minVersion: 0,
  maxVersion: 1,
  async handle(context, request) {
    const responses = await alterConfigResources(context, request.resources, request.validateOnly, {
      editsStored: true,
      topic: (_topic, operations, layers, stored) =>
        validateIncrementalTopicConfigs(stored, operations, layers),
      broker: validateIncrementalBrokerConfigs,
    });
    return { throttleTimeMs: 0, responses };
  },
});
