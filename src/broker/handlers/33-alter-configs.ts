// AlterConfigs (33), the legacy whole-set replacement: a topic's overrides (or a dynamic broker layer) become
// exactly the entries given. Validated by the config module, written to the coordination store, and
// propagated to every broker through a config change notification.

import type { AlterConfigsRequest, AlterConfigsResponse } from '../../protocol/messages/33-alter-configs.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { validateAlterBrokerConfigs, validateAlterTopicConfigs } from '../config/alter-validation.js';
import { alterConfigResources } from './config-change.js';

export const alterConfigsHandler = defineHandler<AlterConfigsRequest, AlterConfigsResponse>({
  apiKey: ApiKey.ALTER_CONFIGS,
  minVersion: 0,
  maxVersion: 2,
  async handle(context, request) {
    const responses = await alterConfigResources(context, request.resources, request.validateOnly, {
      editsStored: false,
      topic: (topic, entries, layers) => validateAlterTopicConfigs(entries, layers, topic),
      broker: validateAlterBrokerConfigs,
    });
    return { throttleTimeMs: 0, responses };
  },
});
