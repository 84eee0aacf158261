// Generator G1: pre-encoded Produce requests (produce-requests.ts) replayed over one or more connections with a
// fixed number of requests in flight on each (5, the Java producer's max.in.flight.requests.per.connection).
// It measures the broker, not a client: nothing is encoded during the run.
//
// Timing. A run has a warm-up (unmeasured; the broker's JIT and page cache settle) and a measured window of
// `durationMs`. Throughput counts the acknowledgements that arrive inside the window, over the window's length,
// so requests straddling either edge are neither counted nor allowed to stretch the window. Latency is taken
// from the intended send time: unthrottled, that is the moment a slot in the window became free; with
// `requestsPerSecond`, it is the request's place in a fixed schedule, so a stalled broker is charged for the
// requests it kept the generator from sending (no coordinated omission).
//
// Checks. Every acknowledgement is checked: no error code, and per partition base offsets that increase; when
// each partition has one writer (always, with one connection) offsets must also be contiguous, which proves
// that every record sent was appended exactly once. After the window the generator waits for every request in
// flight, so `recordsAcknowledged === recordsSent` unless the broker failed some.
import { assert } from '../../src/common/assert.js';
import { errorName } from '../../src/protocol/errors.js';
import { decodeProduceResponse } from '../../src/protocol/messages/00-produce.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { Histogram } from '../harness/histogram.js';
import { benchVersions } from './broker-setup.js';
import { buildProduceRequests, type PreEncodedRequest, type ProduceShape } from './produce-requests.js';
import { WireConnection } from './wire-connection.js';

/** How long to wait for the requests in flight after the window before declaring the broker stuck. */
const drainTimeoutMs = 30_000;

export interface G1Options extends Omit<ProduceShape, 'variants' | 'timeoutMs'> {
  host: string;
  port: number;
  inFlight: number;
  connections: number;
  warmupMs: number;
  durationMs: number;
  /** Fixed rate over all connections; unthrottled when absent. */
  requestsPerSecond?: number;
  /** Called once per batch sent, in send order, with the intended send time (performance.now()). */
  onBatchSent?: (partition: number, intendedMs: number) => void;
  /** Called at the start and the end of the measured window (to sample the broker's usage). */
  onWindow?: (edge: 'start' | 'end') => void;
  /** Produce version sent (default benchVersions.produce; the C mock peer serves up to v7). */
  produceVersion?: number;
}

export interface G1Result {
  seconds: number;
  requests: number;
  records: number;
  batches: number;
  payloadBytes: number;
  /** Produce request bytes on the wire (size prefixes and headers included) acknowledged in the window. */
  wireBytes: number;
  /** Batch bytes acknowledged in the window (what the broker appends). */
  batchBytes: number;
  recordsPerBatch: number;
  latency: Histogram;
  /** Error counts by Kafka error name over the whole run (warm-up included). */
  errors: Record<string, number>;
  recordsSent: number;
  recordsAcknowledged: number;
  offsetsIncreasing: boolean;
  /** Null when partitions had several writers and contiguity cannot be expected. */
  offsetsContiguous: boolean | null;
  /** Next offset per partition after the last acknowledgement. */
  endOffsets: number[];
}

interface Sender {
  connection: WireConnection;
  /** Groups (indexes into the pre-encoded requests) this connection sends, cycled. */
  groups: number[];
  sent: number;
  /** Next send time in the fixed schedule (rate mode). */
  nextIntendedMs: number;
  timer: NodeJS.Timeout | null;
  /** Highest base offset this connection was given per partition, to check that they increase. */
  lastBaseOffset: number[];
}

export async function runG1(options: G1Options): Promise<G1Result> {
  assert(options.inFlight >= 1 && options.connections >= 1, 'need a connection and a request in flight');
  const requests = buildProduceRequests(
    { ...options, timeoutMs: 30_000, variants: 4 },
    options.produceVersion ?? benchVersions.produce,
  );
  const groupCount = requests.length;
  const singleWriter = options.connections === 1 || groupCount >= options.connections;
  const senders: Sender[] = [];
  try {
    for (let c = 0; c < options.connections; c++) {
      const connection = await WireConnection.connect(options.host, options.port);
      const groups: number[] = [];
      for (let g = 0; g < groupCount; g++) if (!singleWriter || g % options.connections === c) groups.push(g);
      senders.push({
        connection,
        groups,
        sent: 0,
        nextIntendedMs: 0,
        timer: null,
        lastBaseOffset: new Array(options.partitions).fill(-1),
      });
    }
    return await drive(options, requests, senders, singleWriter);
  } finally {
    for (const sender of senders) {
      if (sender.timer !== null) clearTimeout(sender.timer);
      sender.connection.close();
    }
  }
}

function drive(
  options: G1Options,
  requests: PreEncodedRequest[][],
  senders: Sender[],
  singleWriter: boolean,
): Promise<G1Result> {
  const latency = new Histogram('us');
  const errors: Record<string, number> = {};
  const nextOffset: number[] = new Array(options.partitions).fill(-1);
  const measured = { requests: 0, records: 0, batches: 0, payloadBytes: 0, wireBytes: 0, batchBytes: 0 };
  let recordsSent = 0;
  let recordsAcknowledged = 0;
  let offsetsIncreasing = true;
  let offsetsContiguous = true;
  const start = performance.now();
  const windowStart = start + options.warmupMs;
  const windowEnd = windowStart + options.durationMs;
  const intervalMs =
    options.requestsPerSecond === undefined ? 0 : (1000 * options.connections) / options.requestsPerSecond;
  const produceVersion = options.produceVersion ?? benchVersions.produce;
  let windowOpened = false;
  let windowClosed = false;

  return new Promise<G1Result>((resolve, reject) => {
    let settled = false;
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      for (const timer of edgeTimers) clearTimeout(timer);
      reject(error);
    };
    const edgeTimers: NodeJS.Timeout[] = [
      setTimeout(() => openWindow(), options.warmupMs),
      setTimeout(() => closeWindow(), options.warmupMs + options.durationMs),
    ];
    function openWindow(): void {
      if (windowOpened) return;
      windowOpened = true;
      options.onWindow?.('start');
    }
    function closeWindow(): void {
      if (windowClosed) return;
      windowClosed = true;
      options.onWindow?.('end');
      const drainTimer = setTimeout(
        () => fail(new Error(`requests still in flight ${drainTimeoutMs} ms after the window`)),
        drainTimeoutMs,
      );
      const check = (): void => {
        if (settled) return;
        if (senders.every((s) => s.connection.inFlight === 0)) {
          clearTimeout(drainTimer);
          settled = true;
          resolve(result());
        } else {
          setTimeout(check, 5);
        }
      };
      check();
    }
    function result(): G1Result {
      return {
        seconds: options.durationMs / 1000,
        ...measured,
        recordsPerBatch: requests[0]![0]!.recordsPerBatch,
        latency,
        errors,
        recordsSent,
        recordsAcknowledged,
        offsetsIncreasing,
        offsetsContiguous: singleWriter ? offsetsContiguous : null,
        endOffsets: nextOffset.map((o) => Math.max(o, 0)),
      };
    }

    function pump(sender: Sender): void {
      if (settled) return;
      while (sender.connection.inFlight < options.inFlight) {
        const now = performance.now();
        if (now >= windowEnd) return;
        let intendedMs = now;
        if (intervalMs > 0) {
          if (sender.nextIntendedMs > now) {
            if (sender.timer === null) {
              sender.timer = setTimeout(() => {
                sender.timer = null;
                pump(sender);
              }, sender.nextIntendedMs - now);
            }
            return;
          }
          intendedMs = sender.nextIntendedMs;
          sender.nextIntendedMs += intervalMs;
        }
        sendOne(sender, intendedMs);
      }
    }

    function sendOne(sender: Sender, intendedMs: number): void {
      const group = sender.groups[sender.sent % sender.groups.length]!;
      const variants = requests[group]!;
      const request = variants[Math.floor(sender.sent / sender.groups.length) % variants.length]!;
      sender.sent++;
      recordsSent += request.records;
      for (const partition of request.partitions) options.onBatchSent?.(partition, intendedMs);
      const wireBytes = sender.connection.send(ApiKey.PRODUCE, produceVersion, [request.body], (reader) => {
        const now = performance.now();
        try {
          checkResponse(sender, request, decodeProduceResponse(reader, produceVersion));
        } catch (error) {
          fail(error as Error);
          return;
        }
        if (now >= windowStart && now < windowEnd) {
          latency.record((now - intendedMs) * 1000);
          measured.requests++;
          measured.records += request.records;
          measured.batches += request.partitions.length;
          measured.payloadBytes += request.payloadBytes;
          measured.batchBytes += request.batchBytes;
          measured.wireBytes += wireBytes;
        }
        pump(sender);
      });
    }

    function checkResponse(
      sender: Sender,
      request: PreEncodedRequest,
      response: ReturnType<typeof decodeProduceResponse>,
    ): void {
      const partitions = response.responses.flatMap((t) => t.partitionResponses);
      assert(
        partitions.length === request.partitions.length,
        `a produce response answered ${partitions.length} of ${request.partitions.length} partitions`,
      );
      for (const answer of partitions) {
        if (answer.errorCode !== 0) {
          const name = errorName(answer.errorCode);
          errors[name] = (errors[name] ?? 0) + 1;
          continue;
        }
        const baseOffset = Number(answer.baseOffset);
        if (baseOffset <= sender.lastBaseOffset[answer.index]!) offsetsIncreasing = false;
        sender.lastBaseOffset[answer.index] = baseOffset;
        const previous = nextOffset[answer.index]!;
        if (previous >= 0 && baseOffset !== previous) offsetsContiguous = false;
        if (previous < 0 && baseOffset !== 0) offsetsContiguous = false;
        nextOffset[answer.index] = Math.max(previous, baseOffset + request.recordsPerBatch);
        recordsAcknowledged += request.recordsPerBatch;
      }
    }

    for (const sender of senders) {
      sender.nextIntendedMs = start;
      sender.connection.onFailure((error) => fail(error));
      pump(sender);
    }
  });
}
