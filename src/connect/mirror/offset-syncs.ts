// Offset syncs: pairs (upstream offset, downstream offset) that say "the record at this source offset was
// written at this target offset". The source task decides when to emit one (SyncDecider, Kafka's rule); the
// checkpoint task keeps what it reads in an OffsetSyncStore and translates committed group offsets with it.
//
// Translation rule (Kafka's OffsetSyncStore.translateDownstream), which never moves a consumer past a record it
// has not processed: take the latest sync whose upstream offset is at or before the group's offset; if they are
// equal the answer is the sync's downstream offset, otherwise the sync's downstream offset + 1 (records between
// the sync and the group's offset may or may not have been written downstream, so only one step past the sync
// is known to be safe). A group behind every known sync cannot be translated (-1, no checkpoint).
//
// Memory: per partition 64 slots, slot i holding a sync whose upstream offset shares all but the low i bits with
// the newest one (Kafka's layout), so old offsets translate coarsely but still safely (any subset of syncs gives
// an answer at or before the true position); plus the last RECENT_SYNCS syncs as they came, so that a group a
// few thousand records behind the mirror (one that just stopped) translates to within offset.lag.max of its
// position rather than to a power-of-two bucket's start.

import { assert } from '../../common/index.js';
import type { OffsetSync } from './records.js';

const SLOTS = 64;
const RECENT_SYNCS = 64;

export class SyncDecider {
  private previousUpstream = -1;
  private previousDownstream = -1;
  private lastSyncDownstream = -1;

  constructor(private readonly offsetLagMax: number) {}

  /**
   * Called for every record written downstream, in order; true when a sync must go out now: the first record
   * of this task's lifetime, a translation that would be offset.lag.max or more behind, a gap upstream (compacted
   * or transactional markers), or a downstream offset that went back (the target topic was recreated).
   */
  update(upstreamOffset: number, downstreamOffset: number): boolean {
    const first = this.lastSyncDownstream === -1;
    const stale = downstreamOffset - (this.lastSyncDownstream + 1) >= this.offsetLagMax;
    const skipped = upstreamOffset - this.previousUpstream !== 1;
    const truncated = downstreamOffset < this.previousDownstream;
    const emit = first || stale || skipped || truncated;
    if (emit) this.lastSyncDownstream = downstreamOffset;
    this.previousUpstream = upstreamOffset;
    this.previousDownstream = downstreamOffset;
    return emit;
  }
}

interface Pair {
  upstream: number;
  downstream: number;
}

export class OffsetSyncStore {
  private readonly syncs = new Map<string, Pair[]>();
  private readonly recent = new Map<string, Pair[]>();
  /** False until the syncs topic has been read to its end once; until then nothing is translated. */
  private ready = false;

  /**
   * `onlyLastUntilReadToEnd`: while reading the topic at start, keep only the newest sync per partition (Kafka's
   * initializationMustReadToEnd). Needed when the emitted checkpoints could not be loaded: a translation through
   * an older sync may be coarser than a checkpoint emitted before the restart, and nothing would stop it moving
   * the group back. With the checkpoints loaded (CheckpointStore) the whole history is kept, so groups behind the
   * newest sync still translate after a restart.
   */
  constructor(private readonly onlyLastUntilReadToEnd = true) {}

  markReadToEnd(): void {
    this.ready = true;
  }

  get isReady(): boolean {
    return this.ready;
  }

  add(sync: OffsetSync): void {
    const key = `${sync.topic}\u0000${sync.partition}`;
    const pair = { upstream: sync.upstreamOffset, downstream: sync.downstreamOffset };
    const slots = this.syncs.get(key);
    // Before the first read to the end (see the constructor), or when the upstream offset went back (a restarted
    // task mirroring again from its stored position, whose older syncs are superseded): start over from this one.
    const onlyLast = !this.ready && this.onlyLastUntilReadToEnd;
    if (slots === undefined || onlyLast || slots[0]!.upstream > pair.upstream) {
      this.syncs.set(key, new Array<Pair>(SLOTS).fill(pair));
      this.recent.set(key, [pair]);
      return;
    }
    const recent = this.recent.get(key)!;
    recent.push(pair);
    if (recent.length > RECENT_SYNCS) recent.shift();
    slots[0] = pair;
    for (let i = 1; i < SLOTS; i++) {
      // Slot i keeps its sync while the two offsets agree above the low i bits.
      // Offsets are non-negative safe integers, so division stands in for Kafka's 64-bit mask.
      const unit = 2 ** i;
      if (Math.floor(slots[i]!.upstream / unit) === Math.floor(pair.upstream / unit)) break;
      slots[i] = pair;
    }
  }

  /** The downstream offset for a group at `upstreamOffset`; null when it cannot be translated (yet). */
  translate(topic: string, partition: number, upstreamOffset: number): number | null {
    if (!this.ready) return null;
    const key = `${topic}\u0000${partition}`;
    const slots = this.syncs.get(key);
    if (slots === undefined) return null;
    let sync = slots.find((s) => s.upstream <= upstreamOffset);
    // A recent sync closer below the offset gives a more precise answer (upstream offsets only grow in both).
    const recent = this.recent.get(key)!;
    for (let i = recent.length - 1; i >= 0; i--) {
      const r = recent[i]!;
      if (r.upstream > upstreamOffset) continue;
      if (sync === undefined || r.upstream > sync.upstream) sync = r;
      break;
    }
    if (sync === undefined) return -1;
    const translated = sync.downstream + (upstreamOffset === sync.upstream ? 0 : 1);
    assert(translated >= 0, 'a translated offset is never negative');
    return translated;
  }
}
