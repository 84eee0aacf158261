// IncrementalAlterConfigs (44): SET, DELETE, APPEND and SUBTRACT on single keys of a topic's overrides or a
// dynamic broker layer, applied to what the store holds now (read for the request, as Kafka reads ZooKeeper),
// validated, written and propagated like AlterConfigs; and SET or DELETE of this broker's log levels (BROKER_LOGGER,
// KIP-412), which are not stored.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  IncrementalAlterConfigsRequest,
  IncrementalAlterConfigsResponse,
} from '../../protocol/messages/44-incremental-alter-configs.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { alterBrokerLoggers } from '../broker-loggers.js';
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
      topic: (topic, operations, layers, stored) =>
        validateIncrementalTopicConfigs(stored, operations, layers, topic),
      broker: validateIncrementalBrokerConfigs,
      brokerLogger: (operations, resourceName, validateOnly) => {
        const { logLevels, brokerId, logger } = context.services;
        const changed = alterBrokerLoggers(
          logLevels,
          brokerId,
          resourceName,
          operations,
          validateOnly,
          logger,
        );
        return changed.ok
          ? { errorCode: ErrorCode.NONE, errorMessage: null }
          : { errorCode: changed.errorCode, errorMessage: changed.errorMessage };
      },
    });
    return { throttleTimeMs: 0, responses };
  },
});
