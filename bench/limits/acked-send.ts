// The producer side of the acknowledged limits (L_replicate_acked, L_sink_acked): requests of a fixed size on one
// connection with at most a window of them unacknowledged, acknowledgements read as cumulative byte counts
// (ack-counts.ts) from whoever answers (a leader once it and both followers appended, or a sink once it appended),
// and each request's round trip from its write, or from when it was due at a fixed rate, to the count that covers
// it. `sendLoad` is what L_sink and L_replicate call in both of their forms.
import type { Socket } from 'node:net';
import { assert } from '../../src/common/assert.js';
import { Histogram, type LatencySummary } from '../harness/histogram.js';
import { formatValuesRange } from '../harness/table.js';
import { AckCountReader } from './ack-counts.js';
import { helperTimeoutMs, sendUntil } from './loopback.js';
import { writeBuffer, writeBytes } from './write-buffers.js';

/** A producer's window: requests of `requestBytes`, at most `requests` unacknowledged (max.in.flight). */
export interface ProducerWindow {
  requestBytes: number;
  requests: number;
}

/** The cluster benchmark generator's window with one partition: 128 KiB requests, 5 in flight. */
export const onePartitionWindow: ProducerWindow = { requestBytes: 128 * 1024, requests: 5 };

/** How an acknowledged limit sends: the window, and a fixed rate (latency at a given load) or flat out. */
export interface AckedSending {
  window: ProducerWindow;
  requestsPerSecond?: number;
}

/** What the producer saw. */
interface AcknowledgedSend {
  bytes: number;
  /** From a request's write to the acknowledgement that covers it, in microseconds. */
  roundTrips: Histogram;
  /** When the last acknowledgement came (performance.now()). */
  endMs: number;
  /** The most requests that were unacknowledged at once (the window, unless the run was very short). */
  inFlightMax: number;
}

/**
 * Sends requests until the deadline with at most `window.requests` unacknowledged, then waits until every one
 * is acknowledged. With `requestsPerSecond`, request i is due at start + i / rate (and leaves then, or once the
 * window has room) and its round trip counts from when it was due, as G1's rate mode charges a stalled broker
 * for the requests it held back. Fails if no acknowledgement comes for helperTimeoutMs while some are out.
 */
function sendAcknowledged(
  socket: Socket,
  deadline: number,
  { window, requestsPerSecond }: AckedSending,
): Promise<AcknowledgedSend> {
  assert(window.requestBytes > 0 && window.requests > 0, 'an empty window sends nothing');
  assert(requestsPerSecond === undefined || requestsPerSecond > 0, 'a rate is a positive number of requests');
  const acks = new AckCountReader();
  const roundTrips = new Histogram('us');
  /** Send (or due) times of the requests in flight, by request number modulo the window. */
  const sentAtMs = new Float64Array(window.requests);
  const startMs = performance.now();
  /** When request `i` is due: at once unthrottled, else on the fixed schedule. */
  const dueMs = (i: number): number =>
    requestsPerSecond === undefined ? performance.now() : startMs + (i * 1000) / requestsPerSecond;
  let sent = 0;
  let acknowledged = 0;
  let lastAckMs = startMs;
  let writes = 0;
  let inFlightMax = 0;
  let timer: NodeJS.Timeout | undefined;
  /** One request: whole write buffers and a part of one, as many as its size takes. */
  const writeRequest = (): void => {
    for (let at = 0; at < window.requestBytes; at += writeBytes) {
      socket.write(writeBuffer(writes++).subarray(0, Math.min(writeBytes, window.requestBytes - at)));
    }
  };
  return new Promise((resolve, reject) => {
    const watchdog = setInterval(() => {
      if (sent > acknowledged && performance.now() - lastAckMs > helperTimeoutMs) {
        finish(
          new Error(`no acknowledgement for ${helperTimeoutMs} ms with ${sent - acknowledged} requests out`),
        );
      }
    }, 1000);
    function finish(error?: Error): void {
      clearInterval(watchdog);
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('error', finish);
      socket.off('close', onClose);
      if (error) reject(error);
      else resolve({ bytes: sent * window.requestBytes, roundTrips, endMs: lastAckMs, inFlightMax });
    }
    function fill(): void {
      clearTimeout(timer);
      timer = undefined;
      let due = dueMs(sent);
      while (sent - acknowledged < window.requests && due < deadline && due <= performance.now()) {
        sentAtMs[sent % window.requests] = due;
        writeRequest();
        sent++;
        due = dueMs(sent);
      }
      inFlightMax = Math.max(inFlightMax, sent - acknowledged);
      const sending = due < deadline;
      if (!sending && sent === acknowledged) finish();
      else if (sending && sent - acknowledged < window.requests) {
        timer = setTimeout(fill, Math.max(0, due - performance.now()));
      }
    }
    function onData(chunk: Buffer): void {
      if (!acks.push(chunk)) return;
      lastAckMs = performance.now();
      assert(
        acks.latest <= sent * window.requestBytes,
        `acknowledged ${acks.latest} bytes of ${sent} requests`,
      );
      while (acknowledged < sent && acks.latest >= (acknowledged + 1) * window.requestBytes) {
        roundTrips.record((lastAckMs - sentAtMs[acknowledged % window.requests]!) * 1000);
        acknowledged++;
      }
      fill();
    }
    const onClose = (): void => finish(new Error('the leader closed the connection'));
    socket.on('data', onData);
    socket.on('error', finish);
    socket.on('close', onClose);
    fill();
  });
}

/** What a limit's producer sent in one repetition. */
export interface LoadSent {
  bytes: number;
  /** Acknowledged: when the last acknowledgement came, the end of the data path's time. */
  acknowledgedAtMs?: number;
  /** For the repetition's details: the write size and, acknowledged, how it sent, its round trip, the most out. */
  details: Record<string, unknown>;
}

/**
 * The producer of a loopback limit until `deadline`: flat out in the protocol's 256 KiB writes, or, given `acked`,
 * acknowledged requests in a window.
 */
export async function sendLoad(socket: Socket, deadline: number, acked?: AckedSending): Promise<LoadSent> {
  if (acked === undefined) return { bytes: await sendUntil(socket, deadline), details: { writeBytes } };
  const sent = await sendAcknowledged(socket, deadline, acked);
  return {
    bytes: sent.bytes,
    acknowledgedAtMs: sent.endMs,
    details: {
      writeBytes: acked.window.requestBytes,
      ...acked,
      roundTrip: sent.roundTrips.summary(),
      inFlightMax: sent.inFlightMax,
    },
  };
}

/** The round trip's p50 and p99 in ms, from an acknowledged repetition's details. */
export function roundTripMs(details: Record<string, unknown>): { p50Ms: number; p99Ms: number } {
  const roundTrip = details.roundTrip as LatencySummary;
  assert(roundTrip !== undefined, 'not an acknowledged repetition: no round trip');
  return { p50Ms: roundTrip.p50 / 1000, p99Ms: roundTrip.p99 / 1000 };
}

/** "round trip p50 a (b-c) ms, p99 ..." over acknowledged repetitions' details. */
export function roundTripNote(details: readonly Record<string, unknown>[]): string {
  const roundTrips = details.map(roundTripMs);
  const p50 = formatValuesRange(roundTrips.map((r) => r.p50Ms));
  const p99 = formatValuesRange(roundTrips.map((r) => r.p99Ms));
  return `round trip p50 ${p50} ms, p99 ${p99} ms`;
}
