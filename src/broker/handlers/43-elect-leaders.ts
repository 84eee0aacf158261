// ElectLeaders (43): preferred or unclean leader election for the partitions named (or all), by the controller
// when it runs on this broker.

import type { ElectLeadersRequest, ElectLeadersResponse } from '../../protocol/messages/43-elect-leaders.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';

export const electLeadersHandler = defineHandler<ElectLeadersRequest, ElectLeadersResponse>({
  apiKey: ApiKey.ELECT_LEADERS,
  minVersion: 0,
  maxVersion: 2,
  handle(context, request) {
    return context.services.controller.electLeaders(request);
  },
});
