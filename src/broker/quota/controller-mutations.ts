// controller_mutation_rate (KIP-599) for CreateTopics, CreatePartitions and DeleteTopics: each topic's
// partitions created or deleted are taken from the client's token bucket. From the versions Kafka made strict
// (CreateTopics v6, CreatePartitions v3, DeleteTopics v5) a topic that arrives while the bucket is empty is
// refused with THROTTLING_QUOTA_EXCEEDED and left alone; older versions are always served and only throttled.
// A request that took nothing (validate only, existing topics) is never throttled.

import type { RequestContext } from '../api-handler.js';

export interface MutationQuota {
  /** Takes `permits` for one topic; false when refused (strict and over quota). */
  record(permits: number): boolean;
  /** Puts the time the client must wait, if any, into the response (call once, when answering). */
  finish(): void;
}

const UNBOUNDED: MutationQuota = { record: () => true, finish: () => {} };

export const THROTTLING_QUOTA_EXCEEDED_MESSAGE = 'The throttling quota has been exceeded.';

export function mutationQuota(context: RequestContext, strictSinceVersion: number): MutationQuota {
  const manager = context.services.quotas.controllerMutation;
  if (!manager.quotasEnabled) return UNBOUNDED;
  const user = context.quotaUser;
  const clientId = context.clientId;
  const strict = context.apiVersion >= strictSinceVersion;
  const clock = context.services.clock;
  // Kafka's ControllerMutationQuota throttles a request only when one of its records violated the quota: a strict
  // one refused (it checks the bucket before taking), a permissive one that left the bucket negative. A strict
  // request that empties the bucket is answered without throttle time; the next one is refused.
  let violated = false;
  return {
    record: (permits) => {
      const result = manager.recordMutation(user, clientId, permits, strict, clock.nowMs());
      if (!result.accepted || (!strict && result.throttleTimeMs > 0)) violated = true;
      return result.accepted;
    },
    // The wait still ahead when answering, not when recorded: the request may have waited for the controller
    // meanwhile (Kafka deducts that time too).
    finish: () => {
      if (violated) context.throttle(manager.mutationThrottleTimeMs(user, clientId, clock.nowMs()));
    },
  };
}
