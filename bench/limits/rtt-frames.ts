// What L_rtt's asker (rtt-limit.ts) and responder (rtt-responder.ts) agree on. A module of its own: the responder's
// module starts its server when loaded, so the asker must not import it.

/** A request's bytes on the wire: about what a one-partition Fetch request takes. */
export const RTT_REQUEST_BYTES = 128;
/** The largest response a request may ask for (a whole fetch.max.bytes and then some). */
export const RTT_RESPONSE_BYTES_MAX = 64 * 1024 * 1024;

export type RttMessage = { type: 'listening'; port: number };
