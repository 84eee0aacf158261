// How the controller reaches brokers: Kafka's three controller-to-broker requests, in the generated request
// types, so that a cluster implementation sends them over the wire unchanged and a single node calls its own
// broker directly.
//
// Requests are built with the fields of the newest versions filled in (topicStates grouped by topic, topic
// ids, partition epochs). A wire implementation that talks to an old broker version moves partitions into the
// ungrouped lists itself; Brook's brokers all speak the newest versions.
//
// ChannelSender keeps Kafka's order guarantee: requests to one broker are sent one at a time, in the order the
// controller made them, so a broker never sees leader epoch 5 after leader epoch 6. Sends to different brokers
// run in parallel. A send that fails (the broker is gone, the connection broke), or is answered with a retriable
// error (a broker still starting answers COORDINATOR_LOAD_IN_PROGRESS, see broker/not-ready.ts), is retried while
// the retry policy allows, then logged and dropped; the broker's death reaches the controller through its
// registration, and a broker that comes back is sent everything again.

import type { BrokerId } from '../common/ids.js';
import type { Logger } from '../common/logger.js';
import { errorName, isRetriable } from '../protocol/errors.js';
import type { LeaderAndIsrRequest, LeaderAndIsrResponse } from '../protocol/messages/04-leader-and-isr.js';
import type { StopReplicaRequest, StopReplicaResponse } from '../protocol/messages/05-stop-replica.js';
import type {
  UpdateMetadataRequest,
  UpdateMetadataResponse,
} from '../protocol/messages/06-update-metadata.js';
import type { ProbeResult } from './liveness-probe.js';
import type { BrokerRegistration } from './zk-layout/index.js';

export interface BrokerChannel {
  leaderAndIsr(brokerId: BrokerId, request: LeaderAndIsrRequest): Promise<LeaderAndIsrResponse>;
  updateMetadata(brokerId: BrokerId, request: UpdateMetadataRequest): Promise<UpdateMetadataResponse>;
  stopReplica(brokerId: BrokerId, request: StopReplicaRequest): Promise<StopReplicaResponse>;
  /**
   * Told the registered brokers before each batch of sends that follows a change of them, so that a wire
   * implementation can open and close connections. Optional: a single node has nothing to connect.
   */
  brokersChanged?(brokers: ReadonlyMap<BrokerId, BrokerRegistration>): void;
  /**
   * The controller has stopped: drop connections, failing the requests in flight. A broker that accepts
   * connections but never answers (stopped, or stuck) would otherwise hold the controller's stop, and the
   * broker's shutdown with it, for a whole request timeout per retry.
   */
  close?(): void;
  /**
   * Fast failure detection (liveness-probe.ts): opens and closes a TCP connection to the broker's inter-broker
   * listener; 'refused' only when the connection was actively refused (no process listens there).
   */
  probe?(brokerId: BrokerId): Promise<ProbeResult>;
}

export type ControllerRequest =
  | { readonly kind: 'leaderAndIsr'; readonly request: LeaderAndIsrRequest }
  | { readonly kind: 'updateMetadata'; readonly request: UpdateMetadataRequest }
  | { readonly kind: 'stopReplica'; readonly request: StopReplicaRequest };

export type ControllerResponse =
  | { readonly kind: 'leaderAndIsr'; readonly response: LeaderAndIsrResponse }
  | { readonly kind: 'updateMetadata'; readonly response: UpdateMetadataResponse }
  | { readonly kind: 'stopReplica'; readonly response: StopReplicaResponse };

/**
 * What to do when a send fails. Kafka's controller retries a request until it succeeds or the broker is gone,
 * because a broker that misses a LeaderAndIsr keeps a stale view of its partitions. Here retries stop as well
 * after attemptsMax, so that one broker that is registered but unreachable cannot hold the queue forever.
 */
export interface RetryPolicy {
  readonly attemptsMax: number;
  readonly backoffMs: number;
  readonly backoffMaxMs: number;
  /** Whether the request still matters: the broker is registered with the epoch the request was made for. */
  stillWanted(brokerId: BrokerId, brokerEpoch: bigint): boolean;
  sleep(ms: number): Promise<void>;
}

export const NO_RETRY: RetryPolicy = {
  attemptsMax: 1,
  backoffMs: 0,
  backoffMaxMs: 0,
  stillWanted: () => false,
  sleep: async () => {},
};

/** Retries while the broker is wanted: 50 ms doubling to 2 s, at most 30 attempts (about 45 s). */
export function defaultRetryPolicy(stillWanted: RetryPolicy['stillWanted']): RetryPolicy {
  return {
    attemptsMax: 30,
    backoffMs: 50,
    backoffMaxMs: 2_000,
    stillWanted,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
}

/** Requests that may wait for one broker (Kafka has no bound; a registered broker that never answers would grow it). */
export const QUEUED_REQUESTS_PER_BROKER_MAX = 1000;

/** Sends through a BrokerChannel, one request in flight per broker, and knows when everything is answered. */
export class ChannelSender {
  private readonly tails = new Map<BrokerId, Promise<void>>();
  private pendingCount = 0;
  private closed = false;
  /** Bumped by dropQueued(): a request queued under an older generation is not sent. */
  private generation = 0;

  private readonly queued = new Map<BrokerId, number>();
  /** Brokers that had requests refused because their queue was full; they get onDrained when it empties. */
  private readonly overflowed = new Set<BrokerId>();

  constructor(
    private readonly channel: BrokerChannel,
    private readonly logger: Logger,
    private readonly retry: RetryPolicy = NO_RETRY,
    private readonly queuedPerBrokerMax = QUEUED_REQUESTS_PER_BROKER_MAX,
    /** Called when the queue of a broker that overflowed has emptied: the broker needs the full state again. */
    private readonly onDrained: (brokerId: BrokerId) => void = () => {},
  ) {}

  /**
   * Queues `message` for `brokerId`; `onAnswer` runs with the response, or with null when the send failed.
   * When the broker already has queuedPerBrokerMax requests waiting (it is registered but not answering), the
   * request is refused (onAnswer gets null) and the broker is resynchronised with the whole state once its
   * queue drains: a bounded queue, and no broker left with a gap in what it was told.
   */
  send(
    brokerId: BrokerId,
    message: ControllerRequest,
    onAnswer?: (response: ControllerResponse | null) => void,
  ): void {
    const queued = this.queued.get(brokerId) ?? 0;
    if (queued >= this.queuedPerBrokerMax) {
      if (!this.overflowed.has(brokerId)) {
        this.logger.error(
          `broker ${brokerId} has ${queued} controller requests waiting; refusing more until it catches up`,
        );
      }
      this.overflowed.add(brokerId);
      if (onAnswer !== undefined) queueMicrotask(() => onAnswer(null));
      return;
    }
    this.queued.set(brokerId, queued + 1);
    const previous = this.tails.get(brokerId) ?? Promise.resolve();
    this.pendingCount += 1;
    const generation = this.generation;
    const next = previous.then(async () => {
      let answer: ControllerResponse | null = null;
      for (let attempt = 1; !this.closed && generation === this.generation; attempt++) {
        let failure: string;
        let refused = false;
        try {
          answer = await this.dispatch(brokerId, message);
          if (!isRetriable(answer.response.errorCode)) {
            // A refusal (a stale epoch) leaves the broker with a view the controller did not mean: worth a line.
            if (answer.response.errorCode !== 0) {
              this.logger.warn(
                `${message.kind} to broker ${brokerId} refused: ${errorName(answer.response.errorCode)}`,
              );
            }
            break;
          }
          // The broker is alive but cannot take the request yet (still starting): ask again.
          refused = true;
          failure = `answered ${errorName(answer.response.errorCode)}`;
        } catch (e) {
          answer = null;
          failure = (e as Error).message;
        }
        const wanted =
          !this.closed &&
          attempt < this.retry.attemptsMax &&
          this.retry.stillWanted(brokerId, message.request.brokerEpoch);
        // A broker that answers "not now" is alive: not worth a warning unless it is given up on.
        this.logger[refused && wanted ? 'info' : 'warn'](
          `${message.kind} to broker ${brokerId} failed (attempt ${attempt}${wanted ? ', will retry' : ', giving up'}): ${failure}`,
        );
        if (!wanted) break;
        await this.retry.sleep(Math.min(this.retry.backoffMaxMs, this.retry.backoffMs * 2 ** (attempt - 1)));
      }
      this.pendingCount -= 1;
      const left = (this.queued.get(brokerId) ?? 1) - 1;
      if (left > 0) this.queued.set(brokerId, left);
      else {
        this.queued.delete(brokerId);
        if (this.overflowed.delete(brokerId)) this.onDrained(brokerId);
      }
      if (onAnswer !== undefined) {
        try {
          onAnswer(answer);
        } catch (e) {
          this.logger.error(
            `handling the answer to ${message.kind} from broker ${brokerId}: ${(e as Error).stack}`,
          );
        }
      }
    });
    this.tails.set(brokerId, next);
    void next.then(() => {
      if (this.tails.get(brokerId) === next) this.tails.delete(brokerId);
    });
  }

  brokersChanged(brokers: ReadonlyMap<BrokerId, BrokerRegistration>): void {
    this.channel.brokersChanged?.(brokers);
  }

  /** Requests queued or in flight. */
  get pending(): number {
    return this.pendingCount;
  }

  /**
   * The controller has stopped: the request in flight to each broker fails (the channel closes its connections)
   * and the ones queued behind it are not sent; each gets onAnswer(null).
   */
  close(): void {
    this.closed = true;
    this.channel.close?.();
  }

  /**
   * The controller resigned: requests it queued and has not sent yet are dropped (onAnswer(null)), and none is
   * retried, as Kafka's controller shuts its channel manager down on resignation. Sent later, they would carry
   * the old controller epoch to a broker that may not have heard of the new controller yet, and be applied
   * there (chaos finding F4: a resigned controller's UpdateMetadata went out six seconds after it resigned).
   * The channel's connections are closed too, so that a request in flight (waiting on a partitioned broker)
   * fails rather than arrives late; the channel opens new ones for the next controller's requests.
   */
  dropQueued(): void {
    this.generation++;
    this.channel.close?.();
  }

  /** Resolves when every request queued before the call has been answered (or has failed). */
  async idle(): Promise<void> {
    await Promise.all([...this.tails.values()]);
  }

  private async dispatch(brokerId: BrokerId, message: ControllerRequest): Promise<ControllerResponse> {
    switch (message.kind) {
      case 'leaderAndIsr':
        return { kind: 'leaderAndIsr', response: await this.channel.leaderAndIsr(brokerId, message.request) };
      case 'updateMetadata':
        return {
          kind: 'updateMetadata',
          response: await this.channel.updateMetadata(brokerId, message.request),
        };
      case 'stopReplica':
        return { kind: 'stopReplica', response: await this.channel.stopReplica(brokerId, message.request) };
    }
  }
}
