// The client side of a fetch session (KIP-227) with one broker. The first fetch is full (session id 0, epoch 0)
// and the broker answers with a session id; later fetches are incremental: they name only partitions that are
// new or whose fetch offset or leader epoch changed, list the partitions to drop as forgotten, and get back only
// partitions with something to say. A session error (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH) or a
// failed request starts over with a full fetch. A broker that answers session id 0 keeps every fetch full.
//
// State changes only in plan() (what the broker will know once it answers) and in the outcome calls.

import { ErrorCode } from '../protocol/errors.js';
import { type TopicPartition, tpKey } from './requests.js';

export interface WantedPartition extends TopicPartition {
  offset: number;
  /** The leader epoch the fetch names for the partition (currentLeaderEpoch; -1 for none). */
  currentLeaderEpoch: number;
}

export interface FetchPlan {
  sessionId: number;
  sessionEpoch: number;
  /** Partitions to name in the request. */
  send: WantedPartition[];
  forgotten: TopicPartition[];
}

export class FetchSession {
  private id = 0;
  private epoch = 0;
  /** What the broker holds for the session: partition -> fetch offset and leader epoch. */
  private known = new Map<string, WantedPartition>();
  private pending: Map<string, WantedPartition> | null = null;
  fullFetches = 0;
  incrementalFetches = 0;

  /** The request for this set of wanted partitions. */
  plan(wanted: WantedPartition[]): FetchPlan {
    const next = new Map(wanted.map((w) => [tpKey(w.topic, w.partition), w]));
    this.pending = next;
    if (this.id === 0) {
      this.fullFetches++;
      return { sessionId: 0, sessionEpoch: 0, send: wanted, forgotten: [] };
    }
    this.incrementalFetches++;
    const send = wanted.filter((w) => changed(this.known.get(tpKey(w.topic, w.partition)), w));
    const forgotten = [...this.known]
      .filter(([k]) => !next.has(k))
      .map(([, p]) => ({ topic: p.topic, partition: p.partition }));
    return { sessionId: this.id, sessionEpoch: this.epoch, send, forgotten };
  }

  /** The broker answered with this top-level error code and session id. */
  answered(errorCode: number, sessionId: number): void {
    if (
      errorCode === ErrorCode.FETCH_SESSION_ID_NOT_FOUND ||
      errorCode === ErrorCode.INVALID_FETCH_SESSION_EPOCH
    ) {
      this.reset();
      return;
    }
    if (errorCode !== 0 || this.pending === null) {
      this.reset();
      return;
    }
    if (this.id === 0) {
      this.id = sessionId;
      this.epoch = 1;
    } else {
      // Epochs run 1..2^31-1 and wrap to 1 (0 opens a session, -1 closes one).
      this.epoch = this.epoch >= 0x7fffffff ? 1 : this.epoch + 1;
    }
    this.known = this.id === 0 ? new Map() : this.pending;
    this.pending = null;
  }

  /** The request failed (connection lost, timeout): the broker's view is unknown, so start over. */
  failed(): void {
    this.reset();
  }

  get sessionId(): number {
    return this.id;
  }

  private reset(): void {
    this.id = 0;
    this.epoch = 0;
    this.known = new Map();
    this.pending = null;
  }
}

/**
 * Whether the broker must be told of a partition in an incremental fetch: it is new to the session, or what the
 * session holds for it differs, its leader epoch included (Kafka's FetchSessionHandler compares the whole
 * PartitionData). An idle partition keeps its offset: a new leader epoch learned after FENCED_LEADER_EPOCH must
 * still reach the broker, or the session goes on fencing it at the old epoch for ever.
 */
function changed(known: WantedPartition | undefined, wanted: WantedPartition): boolean {
  return (
    known === undefined ||
    known.offset !== wanted.offset ||
    known.currentLeaderEpoch !== wanted.currentLeaderEpoch
  );
}
