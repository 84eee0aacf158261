// Counters of the network layer, kept in one plain object that the owner (the socket server) mutates and
// anyone may read. Metrics reporters can sample it later; nothing here allocates per request.

export interface NetworkStats {
  /** Connections accepted and admitted by the connection bounds. */
  connectionsAccepted: number;
  /** Connections closed on accept because max.connections or max.connections.per.ip was reached. */
  connectionsRejected: number;
  /** Connections open now. */
  connectionsOpen: number;
  /** Connections closed for malformed input (bad size prefix, short header, DecodeError from a handler). */
  connectionsClosedMalformed: number;
  /** Connections closed by connections.max.idle.ms. */
  connectionsClosedIdle: number;
  /** Complete frames read and handed to the handler. */
  requestsReceived: number;
  /** Responses written (requests with NO_RESPONSE are not counted). */
  responsesSent: number;
  /** Requests dispatched, not yet answered and not waiting for an event, broker-wide (queued.max.requests). */
  requestsInFlight: number;
  /** Requests dispatched, not yet answered, and marked as waiting for an event (not counted above). */
  requestsWaiting: number;
  /** Frame bytes of those requests (bounded by queued.max.request.bytes when set). */
  requestBytesInFlight: number;
  /** Bytes read from sockets, size prefixes included. */
  bytesIn: number;
  /** Bytes handed to sockets, size prefixes included. */
  bytesOut: number;
  /** Times a connection stopped reading because of a bound (in-flight, queued requests, write buffer). */
  readPauses: number;
  /** Of bytesIn, those read straight into their frame's buffer (own-reads.ts), never copied after the kernel's. */
  bytesReadIntoFrames: number;
}

export function createNetworkStats(): NetworkStats {
  return {
    connectionsAccepted: 0,
    connectionsRejected: 0,
    connectionsOpen: 0,
    connectionsClosedMalformed: 0,
    connectionsClosedIdle: 0,
    requestsReceived: 0,
    responsesSent: 0,
    requestsInFlight: 0,
    requestsWaiting: 0,
    requestBytesInFlight: 0,
    bytesIn: 0,
    bytesOut: 0,
    readPauses: 0,
    bytesReadIntoFrames: 0,
  };
}
