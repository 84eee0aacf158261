// LeaderAndIsr (4) from the controller over the wire: applied like the controller's direct call on its own broker
// (see cluster/controller-requests.ts).

import type { LeaderAndIsrRequest, LeaderAndIsrResponse } from '../../protocol/messages/04-leader-and-isr.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';

export const leaderAndIsrHandler = defineHandler<LeaderAndIsrRequest, LeaderAndIsrResponse>({
  apiKey: ApiKey.LEADER_AND_ISR,
  minVersion: 0,
  maxVersion: 7,
  handle(context, request) {
    return context.services.controllerRequests.leaderAndIsr(request);
  },
});
