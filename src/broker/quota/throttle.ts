// How a throttle time reaches the client (KIP-219): the response leaves at once and the broker then reads nothing
// more from the connection for that time (Kafka mutes the channel). Kafka does this for every version since 2.0:
// a client of a version that honours throttle_time_ms also waits by itself, an older one is held back by the mute
// alone (its next request is answered only after the throttle time). Its responses are never delayed.

import type { Request, Response } from '../../network/request.js';
import { ApiKey } from '../../protocol/registry.js';

/** Inter-broker and authentication requests, which Kafka answers without request-quota throttling. */
export const REQUEST_QUOTA_EXEMPT: ReadonlySet<number> = new Set([
  ApiKey.LEADER_AND_ISR,
  ApiKey.STOP_REPLICA,
  ApiKey.UPDATE_METADATA,
  ApiKey.CONTROLLED_SHUTDOWN,
  ApiKey.WRITE_TXN_MARKERS,
  ApiKey.ALTER_PARTITION,
  ApiKey.SASL_HANDSHAKE,
  ApiKey.SASL_AUTHENTICATE,
]);

export function applyThrottle(request: Request, response: Response, throttleTimeMs: number): Response {
  request.connection.throttle(throttleTimeMs);
  return response;
}
