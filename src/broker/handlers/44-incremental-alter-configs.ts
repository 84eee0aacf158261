// IncrementalAlterConfigs (44): SET, DELETE, APPEND and SUBTRACT on single keys of a topic's overrides or a
// dynamic broker layer, applied to what is stored now, validated, written and propagated like AlterConfigs.

import { ErrorCode } from '../../protocol/errors.js';
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
import { brokerResource } from '../config/broker-resource.js';
import { ResourceType } from './32-describe-configs.js';
import { applyConfigChange } from './config-change.js';

export const incrementalAlterConfigsHandler = defineHandler<
  IncrementalAlterConfigsRequest,
  IncrementalAlterConfigsResponse
>({
  apiKey: ApiKey.INCREMENTAL_ALTER_CONFIGS,
  minVersion: 0,
  maxVersion: 1,
  async handle(context, request) {
    const { topicConfigs, brokerId } = context.services;
    const responses = [];
    for (const resource of request.resources) {
      const respond = (errorCode: number, errorMessage: string | null) => ({
        errorCode,
        errorMessage,
        resourceType: resource.resourceType,
        resourceName: resource.resourceName,
      });
      if (resource.resourceType === ResourceType.TOPIC) {
        const current = topicConfigs.overridesFor(resource.resourceName);
        const checked = validateIncrementalTopicConfigs(current, resource.configs, topicConfigs.layers);
        const r = await applyConfigChange(
          context,
          { kind: 'topic', name: resource.resourceName },
          checked,
          request.validateOnly,
        );
        responses.push(respond(r.errorCode, r.errorMessage));
      } else if (resource.resourceType === ResourceType.BROKER) {
        const target = brokerResource(resource.resourceName, brokerId);
        if (!target.ok) {
          responses.push(respond(target.errorCode, target.errorMessage));
          continue;
        }
        const checked = validateIncrementalBrokerConfigs(
          resource.configs,
          target.perBroker,
          topicConfigs.layers,
        );
        const r = await applyConfigChange(
          context,
          { kind: 'broker', perBroker: target.perBroker },
          checked,
          request.validateOnly,
        );
        responses.push(respond(r.errorCode, r.errorMessage));
      } else {
        responses.push(
          respond(ErrorCode.INVALID_REQUEST, `Resource type ${resource.resourceType} is not supported.`),
        );
      }
    }
    return { throttleTimeMs: 0, responses };
  },
});
