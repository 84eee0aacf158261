// How a throttle time reaches the client (KIP-219). A client of a version that honours throttle_time_ms gets its
// response at once and the broker then reads nothing more from its connection for that time (Kafka mutes the
// channel), so even a client that ignores the field is held back. An older client gets the response only after
// the throttle time, as Kafka did before KIP-219.

import type { Request, Response } from '../../network/request.js';
import { clientShouldThrottle } from '../../protocol/client-throttle.js';
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

export function applyThrottle(
  request: Request,
  response: Response,
  throttleTimeMs: number,
): Response | Promise<Response> {
  if (clientShouldThrottle(request.apiKey, request.apiVersion)) {
    request.connection.throttle(throttleTimeMs);
    return response;
  }
  return new Promise((resolve) => setTimeout(() => resolve(response), throttleTimeMs));
}
