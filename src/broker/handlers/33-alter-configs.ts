// AlterConfigs (33), the legacy whole-set replacement: a topic's overrides (or a dynamic broker layer) become
// exactly the entries given. Validated by the config module, written to the coordination store, and
// propagated to every broker through a config change notification.

import { ErrorCode } from '../../protocol/errors.js';
import type { AlterConfigsRequest, AlterConfigsResponse } from '../../protocol/messages/33-alter-configs.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { validateAlterBrokerConfigs, validateAlterTopicConfigs } from '../config/alter-validation.js';
import { brokerResource } from '../config/broker-resource.js';
import { ResourceType } from './32-describe-configs.js';
import { applyConfigChange } from './config-change.js';

export const alterConfigsHandler = defineHandler<AlterConfigsRequest, AlterConfigsResponse>({
  apiKey: ApiKey.ALTER_CONFIGS,
  minVersion: 0,
  maxVersion: 2,
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
        const checked = validateAlterTopicConfigs(resource.configs, topicConfigs.layers);
        responses.push(
          await applyConfigChange(
            context,
            { kind: 'topic', name: resource.resourceName },
            checked,
            request.validateOnly,
          ).then((r) => respond(r.errorCode, r.errorMessage)),
        );
      } else if (resource.resourceType === ResourceType.BROKER) {
        const target = brokerResource(resource.resourceName, brokerId);
        if (!target.ok) {
          responses.push(respond(target.errorCode, target.errorMessage));
          continue;
        }
        const checked = validateAlterBrokerConfigs(resource.configs, target.perBroker, topicConfigs.layers);
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
