// The client side of a fetch session (KIP-227) with one broker. The first fetch is full (session id 0, epoch 0)
// and the broker answers with a session id; later fetches are incremental: they name only partitions that are
// new or whose fetch offset or leader epoch changed, list the partitions to drop as forgotten, and get back only
// partitions with something to say. A top-level error or a failed request starts over with a full fetch that
// names the old session with epoch 0, which closes it on the broker as the new one opens (Kafka's
// nextCloseExistingAttemptNew: no session is left holding one of the broker's cache slots), except after
// FETCH_SESSION_ID_NOT_FOUND (the broker has none to close). A broker that answers session id 0 keeps every fetch
// full.
//
// Topic ids (KIP-516): a session of Fetch v13+ names its partitions by topic id, one of v12 or older by name. A
// partition is known with the id it was added with: when its topic is deleted and created again under the same
// name, metadata gives the partition a new id, and the next incremental fetch sends it with the new id and
// forgets it under the old one (Kafka's FetchSessionHandler: a replaced partition), so that the broker reads the
// new topic. A session is kept by name or by id for its life, as Kafka's broker holds it (it answers
// FETCH_SESSION_TOPIC_ID_ERROR to a fetch that switches): a fetch that switches starts a new session instead.
//
// State changes only in plan() (what the broker will know once it answers) and in the outcome calls.

import { ErrorCode } from '../protocol/errors.js';
import { ZERO_UUID } from '../protocol/messages/codec-support.js';
import { type TopicPartition, tpKey } from './requests.js';

export interface WantedPartition extends TopicPartition {
  /** The topic's id in the metadata (ZERO_UUID when it has none). */
  topicId: string;
  offset: number;
  /** The leader epoch the fetch names for the partition (currentLeaderEpoch; -1 for none). */
  currentLeaderEpoch: number;
}

export interface FetchPlan {
  sessionId: number;
  sessionEpoch: number;
  /** Partitions to name in the request. */
  send: WantedPartition[];
  /** Partitions to drop from the session, with the topic id it holds them under. */
  forgotten: ForgottenPartition[];
}

export interface ForgottenPartition extends TopicPartition {
  topicId: string;
}

/**
 * Whether a fetch of these partitions may name topics by id (Fetch v13+): only when every one has an id, else it
 * goes as v12 by name (Kafka's FetchRequestData.canUseTopicIds).
 */
export function canUseTopicIds(wanted: readonly WantedPartition[]): boolean {
  return wanted.every((w) => w.topicId !== ZERO_UUID && w.topicId !== '');
}

export class FetchSession {
  private id = 0;
  private epoch = 0;
  /** What the broker holds for the session: partition -> fetch offset and leader epoch. */
  private known = new Map<string, WantedPartition>();
  private pending: Map<string, WantedPartition> | null = null;
  /** Whether the session names topics by id (opened by Fetch v13+). */
  private byId = false;
  fullFetches = 0;
  incrementalFetches = 0;

  /**
   * The request for this set of wanted partitions, for a fetch that names topics by id (`topicIds`: the request
   * goes as v13+) or by name.
   */
  plan(wanted: WantedPartition[], topicIds: boolean): FetchPlan {
    const next = new Map(wanted.map((w) => [tpKey(w.topic, w.partition), w]));
    if (this.byId !== topicIds) this.startOver();
    this.pending = next;
    this.byId = topicIds;
    if (this.epoch === 0) {
      this.fullFetches++;
      return { sessionId: this.id, sessionEpoch: 0, send: wanted, forgotten: [] };
    }
    this.incrementalFetches++;
    const send = wanted.filter((w) => changed(this.known.get(tpKey(w.topic, w.partition)), w));
    const forgotten: ForgottenPartition[] = [];
    for (const [k, p] of this.known) {
      const w = next.get(k);
      // A partition whose topic has another id now is sent again under the new id (changed() says so) and, by
      // id, forgotten under the old one. By name the broker cannot tell the two apart: forgetting it would drop
      // the partition just sent.
      if (w === undefined || (topicIds && replaced(p, w))) {
        forgotten.push({ topic: p.topic, partition: p.partition, topicId: p.topicId });
      }
    }
    return { sessionId: this.id, sessionEpoch: this.epoch, send, forgotten };
  }

  /**
   * The broker answered with this top-level error code and session id, naming `partitions` (keys by tpKey; a
   * topic id the fetch did not send as a key that names no partition). Answers whether the response's partitions
   * may be used, as Kafka's FetchSessionHandler.handleResponse: not after a top-level error, nor when they do not
   * match the session (responsePartitionsProblem), nor for a throttled full fetch's empty answer (KIP-219).
   */
  answered(
    response: { errorCode: number; sessionId: number; throttleTimeMs: number },
    partitions: readonly string[],
  ): boolean {
    const { errorCode, sessionId } = response;
    if (errorCode === ErrorCode.FETCH_SESSION_ID_NOT_FOUND) {
      this.id = 0;
      this.startOver();
      return false;
    }
    if (errorCode !== 0 || this.pending === null) {
      this.startOver();
      return false;
    }
    const full = this.epoch === 0;
    if (responsePartitionsProblem(full, this.pending, partitions, response.throttleTimeMs) !== null) {
      // A full answer that does not match starts without a session at all (Kafka's INITIAL: the session it may have
      // opened is left to the broker), an incremental one closes the session as the next full fetch opens another.
      if (full) this.id = 0;
      this.startOver();
      return false;
    }
    if (this.epoch === 0 || sessionId === 0) {
      // A full fetch's answer opens a session (or, with id 0, none); an incremental one with id 0 closed it.
      this.id = sessionId;
      this.epoch = sessionId === 0 ? 0 : 1;
    } else {
      // Epochs run 1..2^31-1 and wrap to 1 (0 opens a session, -1 closes one).
      this.epoch = this.epoch >= 0x7fffffff ? 1 : this.epoch + 1;
    }
    this.known = this.id === 0 ? new Map() : this.pending;
    this.pending = null;
    return true;
  }

  /** The request failed (connection lost, timeout): the broker's view is unknown, so start over. */
  failed(): void {
    this.startOver();
  }

  /**
   * The client is done with the session (the consumer closes): the session id to name in a last Fetch with
   * epoch -1 and no partitions, which makes the broker drop the session (Kafka's FetchSessionHandler.notifyClose),
   * or null when there is none to close. The next fetch, if any, is full and without a session id.
   */
  close(): number | null {
    const id = this.id;
    this.id = 0;
    this.startOver();
    return id === 0 ? null : id;
  }

  /** The id of the session this client holds with the broker (0 for none). */
  get sessionId(): number {
    return this.id;
  }

  /** The next fetch is full; it still names the session, with epoch 0, so that the broker closes it. */
  private startOver(): void {
    this.epoch = 0;
    this.known = new Map();
    this.pending = null;
  }
}

/**
 * What is wrong with the partitions of a fetch response (keys by tpKey), or null: as Kafka's FetchSessionHandler,
 * an answer may name only partitions of the session (`requested`: all the fetch wants, sent or held by the
 * session), and a full one must name every one of them. A full fetch's empty answer with a throttle time is
 * KIP-219's way to throttle, not data.
 */
export function responsePartitionsProblem(
  full: boolean,
  requested: ReadonlyMap<string, unknown>,
  answered: readonly string[],
  throttleTimeMs: number,
): string | null {
  if (full && answered.length === 0 && throttleTimeMs > 0) return 'an empty throttled full fetch response';
  const extra = answered.filter((k) => !requested.has(k));
  if (extra.length > 0) return `partitions not in the session: ${extra.join(', ')}`;
  if (full) {
    const named = new Set(answered);
    const omitted = [...requested.keys()].filter((k) => !named.has(k));
    if (omitted.length > 0) return `a full fetch response without ${omitted.join(', ')}`;
  }
  return null;
}

/**
 * Whether the broker must be told of a partition in an incremental fetch: it is new to the session, or what the
 * session holds for it differs, its leader epoch and topic id included (Kafka's FetchSessionHandler compares the
 * whole PartitionData). An idle partition keeps its offset: a new leader epoch learned after FENCED_LEADER_EPOCH must
 * still reach the broker, or the session goes on fencing it at the old epoch for ever.
 */
function changed(known: WantedPartition | undefined, wanted: WantedPartition): boolean {
  return (
    known === undefined ||
    known.topicId !== wanted.topicId ||
    known.offset !== wanted.offset ||
    known.currentLeaderEpoch !== wanted.currentLeaderEpoch
  );
}

/** A partition the session holds under one topic id and metadata now gives another (both ids known). */
function replaced(known: WantedPartition, wanted: WantedPartition): boolean {
  return known.topicId !== wanted.topicId && known.topicId !== ZERO_UUID && wanted.topicId !== ZERO_UUID;
}
