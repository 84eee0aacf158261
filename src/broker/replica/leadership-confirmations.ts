// Confirms that this broker still leads a partition before it answers a read that must not come from a deposed
// leader's stale copy: a stable OffsetFetch (require_stable) at the group coordinator, the offsets an
// exactly-once processor resumes from, and ListOffsets latest under read_committed, the end a Streams task
// restores its changelog to. A leader cut off from ZooKeeper is not told that the controller moved its partition,
// and clients may still reach it; answering from its memory there made a resumed processor read its input twice
// (chaos seed 1, workload txn). Kafka has no such check; Brook adds it where a stale answer breaks exactly-once.
//
// The proof, with no extra round trip to the controller, rests on a follower that has taken a newer leader epoch
// never fetching from this broker at the old one. A confirmation that began at time T counts, per replica, the
// fetches that arrive naming the current leader epoch; a fetch arriving after T may have been sent before it, the
// second one was sent after the answer to the first, hence after T (a follower's fetcher has one fetch of a
// partition in flight at a time). A replica with two such fetches had not learnt a newer epoch at T. It is enough
// when either
// - every follower of the maximal ISR (the committed ISR and replicas a pending change adds) did: a new leader is
//   elected from the ISR, so none had been elected before T, and nothing newer was acknowledged; or
// - at least `replicas - min.insync.replicas` followers did: a write a newer leader acknowledged before T is on at
//   least min.insync.replicas replicas that had all learnt the newer epoch by then, which leaves too few replicas
//   outside this broker and the confirming ones. With min.insync.replicas 2 of 3 one live follower confirms, so a
//   hung follower still in the ISR does not stop these reads (it does stop acks=all writes until it leaves).
// While a confirmation waits, follower fetches of the partition are answered at once instead of waiting for data
// (shouldAnswerAtOnce) until they have done their part, so the two fetches take two round trips, not two
// replica.fetch.wait.max.ms.
//
// A leader whose ISR is itself alone confirms at once: no other replica could be elected without an unclean
// election. A confirmation that does not complete within its timeout, or sees the leader epoch change, fails.

import type { Clock, Timer } from '../../common/clock.js';
import type { BrokerId } from '../../common/ids.js';
import type { Partition } from './partition.js';

/** Fetches a follower must send after the confirmation began: the second was sent after it (see above). */
const FETCHES_NEEDED = 2;

interface Waiter {
  readonly partition: Partition;
  readonly leaderEpoch: number;
  /** Follower (every replica but this broker) → fetches seen at the leader epoch since the confirmation began. */
  readonly fetches: Map<BrokerId, number>;
  readonly timer: Timer;
  readonly resolve: (confirmed: boolean) => void;
}

export class LeadershipConfirmations {
  /** Partition key → the confirmations waiting on it. */
  private readonly waiting = new Map<string, Set<Waiter>>();

  constructor(
    private readonly clock: Clock,
    /** Wakes the requests parked on the partition (follower fetches answer at once while a confirmation waits). */
    private readonly wake: (partitionKey: string) => void,
  ) {}

  /**
   * Resolves true once enough followers (see the file header) have shown they still follow this leader at its
   * epoch; false when this broker does not lead the partition, its epoch changes, or `timeoutMs` passes first.
   */
  confirm(partition: Partition, timeoutMs: number): Promise<boolean> {
    if (!partition.isLeader) return Promise.resolve(false);
    const fetches = new Map<BrokerId, number>();
    for (const id of partition.replicas) if (id !== partition.leaderId) fetches.set(id, 0);
    if (confirmed({ partition, fetches })) return Promise.resolve(true);
    return new Promise((resolve) => {
      const key = partition.key;
      const waiter: Waiter = {
        partition,
        leaderEpoch: partition.leaderEpoch,
        fetches,
        timer: this.clock.setTimer(timeoutMs, () => this.finish(key, waiter, false)).unref(),
        resolve,
      };
      let waiters = this.waiting.get(key);
      if (waiters === undefined) this.waiting.set(key, (waiters = new Set()));
      waiters.add(waiter);
      this.wake(key);
    });
  }

  /** Whether some confirmation waits on the partition (the fetch handler counts its follower fetches then). */
  isWaiting(partitionKey: string): boolean {
    return this.waiting.size > 0 && this.waiting.has(partitionKey);
  }

  /**
   * Whether `follower`'s fetch of the partition should be answered without waiting for data: some confirmation
   * still needs a fetch of it. Only then: a follower that has done its part goes back to long polls, so that a
   * confirmation waiting on another, dead follower does not keep a live one in a loop of empty fetches.
   */
  shouldAnswerAtOnce(partitionKey: string, follower: BrokerId): boolean {
    if (this.waiting.size === 0) return false;
    for (const w of this.waiting.get(partitionKey) ?? []) {
      if ((w.fetches.get(follower) ?? FETCHES_NEEDED) < FETCHES_NEEDED) return true;
    }
    return false;
  }

  /** Whether any confirmation waits at all (the fetch path skips its bookkeeping when none does). */
  get active(): boolean {
    return this.waiting.size > 0;
  }

  /**
   * A fetch of `follower` for the partition arrived, naming the partition's current leader epoch (the fetch
   * handler checked it); counts towards the confirmations waiting on it.
   */
  onFollowerFetch(partition: Partition, follower: BrokerId): void {
    const waiters = this.waiting.get(partition.key);
    if (waiters === undefined) return;
    for (const w of [...waiters]) {
      if (w.partition !== partition || !partition.isLeader || partition.leaderEpoch !== w.leaderEpoch) {
        this.finish(partition.key, w, false);
        continue;
      }
      const seen = w.fetches.get(follower);
      if (seen !== undefined) w.fetches.set(follower, seen + 1);
      if (confirmed(w)) this.finish(partition.key, w, true);
    }
  }

  private finish(key: string, waiter: Waiter, confirmed: boolean): void {
    const waiters = this.waiting.get(key);
    if (waiters === undefined || !waiters.delete(waiter)) return;
    if (waiters.size === 0) this.waiting.delete(key);
    waiter.timer.cancel();
    waiter.resolve(confirmed);
  }
}

/** One of the two rules of the file header holds: the maximal ISR's followers, or enough replicas, fetched twice. */
function confirmed(w: Pick<Waiter, 'partition' | 'fetches'>): boolean {
  const p = w.partition;
  const isr = p.maximalIsr;
  let allIsr = true;
  let replicas = 0;
  for (const [id, seen] of w.fetches) {
    if (seen >= FETCHES_NEEDED) replicas++;
    else if (isr.includes(id)) allIsr = false;
  }
  return allIsr || replicas >= p.replicas.length - p.settings.minInsyncReplicas;
}
