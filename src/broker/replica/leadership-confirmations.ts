// Confirms that this broker still leads a partition before it answers a read that must not come from a deposed
// leader's stale copy: a stable OffsetFetch (require_stable) at the group coordinator, the offsets an
// exactly-once processor resumes from. A leader cut off from ZooKeeper is not told that the controller moved its
// partition, and clients may still reach it; answering from its memory there made a resumed processor read its
// input twice (chaos seed 1, workload txn). Kafka has no such check; Brook adds it where a stale answer breaks
// exactly-once.
//
// The proof, with no extra round trip to the controller: a new leader comes from the ISR, and once a follower has
// taken a new leader's epoch it never fetches from this broker at the old one. So when every follower of the
// maximal ISR (the committed ISR and replicas a pending change adds) has fetched at the current leader epoch with
// a request it sent after the confirmation began, none of them had been made leader or follower of a newer epoch
// at that moment, and no write of a newer leader could have been acknowledged before it. A fetch that arrives
// after the start may have been sent before it; the second one to arrive was sent after the answer to the first,
// hence after the start (a follower's fetcher has one fetch of a partition in flight at a time). While a
// confirmation waits, follower fetches of the partition are answered at once instead of waiting for data
// (shouldAnswerAtOnce), so the two fetches take two round trips, not two replica.fetch.wait.max.ms.
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
  /** Follower → fetches of the partition seen at the leader epoch since the confirmation began. */
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
   * Resolves true once every follower of the partition's maximal ISR has shown it still follows this leader at
   * its epoch; false when this broker does not lead it, its epoch changes, or `timeoutMs` passes first.
   */
  confirm(partition: Partition, timeoutMs: number): Promise<boolean> {
    if (!partition.isLeader) return Promise.resolve(false);
    const fetches = new Map<BrokerId, number>();
    for (const id of partition.maximalIsr) if (id !== partition.leaderId) fetches.set(id, 0);
    if (fetches.size === 0) return Promise.resolve(true);
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

  /** Whether some confirmation waits on the partition: its follower fetches are answered without waiting. */
  shouldAnswerAtOnce(partitionKey: string): boolean {
    return this.waiting.size > 0 && this.waiting.has(partitionKey);
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
      if (this.confirmed(w)) this.finish(partition.key, w, true);
    }
  }

  /**
   * Every follower still in the maximal ISR fetched twice. One that left it (the controller accepted a shrink) need
   * not: the controller elects only from the ISR it committed.
   */
  private confirmed(w: Waiter): boolean {
    const isr = w.partition.maximalIsr;
    for (const [id, seen] of w.fetches) if (seen < FETCHES_NEEDED && isr.includes(id)) return false;
    return true;
  }

  private finish(key: string, waiter: Waiter, confirmed: boolean): void {
    const waiters = this.waiting.get(key);
    if (waiters === undefined || !waiters.delete(waiter)) return;
    if (waiters.size === 0) this.waiting.delete(key);
    waiter.timer.cancel();
    waiter.resolve(confirmed);
  }
}
