// The leader's rules for a follower's fetch that do not depend on the wire: whether the fetcher's log diverged
// from this one (KIP-320), and whether its fetch offset says how far it has caught up. The Fetch handler applies
// them to fetches over the wire, and the data-plane simulation (test/sim) to fetches in process, so that both
// run the same rules.

import type { LeaderEpoch } from '../../common/ids.js';
import type { Log } from '../../storage/log.js';

/** What the leader does with a fetch given the fetcher's last fetched epoch. */
export type LastFetchedEpochCheck =
  | { readonly kind: 'read' }
  | { readonly kind: 'out-of-range' }
  | { readonly kind: 'diverging'; readonly epoch: number; readonly endOffset: number };

/**
 * KIP-320 (Kafka's Partition.readRecords): when this log ends the fetcher's last fetched epoch below the fetch
 * offset, or knows only an older epoch than it, the fetcher's log diverged from this one: it gets the end of the
 * epoch both logs share. An epoch this log cannot place, or a fetch offset below the log start, is out of range.
 * A last fetched epoch below 0 (none, or an old fetch version) skips the check.
 */
export function checkLastFetchedEpoch(
  log: Pick<Log, 'epochCache' | 'logEndOffset' | 'logStartOffset'>,
  fetchOffset: number,
  lastFetchedEpoch: number,
): LastFetchedEpochCheck {
  if (lastFetchedEpoch < 0) return { kind: 'read' };
  const end = log.epochCache.endOffsetFor(lastFetchedEpoch as LeaderEpoch, log.logEndOffset);
  if (end.epoch < 0 || end.endOffset < 0 || fetchOffset < log.logStartOffset) return { kind: 'out-of-range' };
  if (end.epoch >= lastFetchedEpoch && end.endOffset >= fetchOffset) return { kind: 'read' };
  return { kind: 'diverging', epoch: end.epoch, endOffset: end.endOffset };
}

/**
 * A follower's fetch offset is its log end only when this log holds it: one past the end comes from a log that
 * diverged (records this leader never had) and is answered OFFSET_OUT_OF_RANGE. Counted as progress, it took a
 * follower that had not fetched this log's records back into the ISR (chaos finding F4). Kafka updates a
 * follower's state only after a read of the log succeeded.
 */
export function fetchOffsetIsProgress(
  log: Pick<Log, 'logEndOffset' | 'logStartOffset'>,
  fetchOffset: number,
): boolean {
  return fetchOffset >= log.logStartOffset && fetchOffset <= log.logEndOffset;
}
