// Liveness observations for the report (not checkers: they do not fail a run). A consumer that fetches a
// partition from a broker that is no longer its leader, for several state samples in a row, is reported with
// the time span; so are partitions the group had not consumed to the end when the run stopped.

import type { Op } from './history.js';

/** Consecutive consumer state samples (5 s apart) with a stale leader before it is reported. */
const STALE_SAMPLES_MIN = 3;

export function staleLeaderViews(history: readonly Op[]): string[] {
  let leaders: Record<string, { leader: number }> | null = null;
  // consumer/partition -> first time seen stale, samples, last time, what it had and what the cluster had
  const open = new Map<string, { from: number; to: number; samples: number; had: number; actual: number }>();
  const out: string[] = [];
  const close = (key: string) => {
    const s = open.get(key);
    open.delete(key);
    if (s === undefined || s.samples < STALE_SAMPLES_MIN) return;
    const [consumer, partition] = key.split('/');
    out.push(
      `${consumer} fetched partition ${partition} from broker ${s.had} while the leader was ${s.actual}, ` +
        `from ${(s.from / 1000).toFixed(1)} s to ${(s.to / 1000).toFixed(1)} s (${s.samples} samples)`,
    );
  };
  for (const op of history) {
    if (op.process === 'harness' && op.f === 'leaders')
      leaders = op.value as Record<string, { leader: number }>;
    if (op.f !== 'state' || leaders === null) continue;
    const view = (op.value as { leaders?: Record<string, number> }).leaders ?? {};
    for (const [partition, had] of Object.entries(view)) {
      const key = `${op.process}/${partition}`;
      const actual = leaders[partition]?.leader;
      if (actual === undefined || actual < 0 || actual === had) {
        close(key);
        continue;
      }
      const s = open.get(key);
      if (s === undefined) open.set(key, { from: op.time, to: op.time, samples: 1, had, actual });
      else Object.assign(s, { to: op.time, samples: s.samples + 1, actual });
    }
  }
  for (const key of [...open.keys()]) close(key);
  return out;
}

/**
 * Leader changes to a broker that was not in the partition's ISR at the previous sample of the cluster's view
 * (harness `leaders`, every 5 s): unclean elections, which the measurement of --unclean counts. Each sample is
 * one broker's metadata, and a broker cut off from the controller keeps describing itself as leader at its old
 * epoch (a deposed leader that cannot acknowledge acks=all writes): a sample at a lower leader epoch than the
 * last one taken is skipped, so such stale views are not read as elections. A broker that joined
 * the ISR and became leader between two samples is listed too: long runs show it (the ISR grew back, then its
 * leader died, within 5 s). The list points at elections to look at; the checkers decide whether anything was lost. When the epoch rose by more than one, elections were missed between
 * the samples, and the text says so.
 */
export function leadersOutsideIsr(
  history: readonly Op[],
): { time: number; partition: string; text: string }[] {
  const last = new Map<string, LeaderSample>();
  const out: { time: number; partition: string; text: string }[] = [];
  for (const op of history) {
    if (op.process !== 'harness' || op.f !== 'leaders') continue;
    for (const [partition, now] of Object.entries(op.value as Record<string, LeaderSample>)) {
      if (now.leader < 0) continue;
      const before = last.get(partition);
      // A view at a lower epoch is a deposed leader's: skipped. One at the same epoch is the same term, whose
      // ISR may have grown or shrunk since (ISR changes keep the leader epoch): it replaces the last view.
      // Samples recorded before leader epochs were (no epoch) compare as before: every change counts.
      const stale =
        before !== undefined &&
        now.leaderEpoch !== undefined &&
        before.leaderEpoch !== undefined &&
        now.leaderEpoch < before.leaderEpoch;
      if (stale) continue;
      if (before !== undefined && now.leader !== before.leader && !before.isr.includes(now.leader)) {
        const missed =
          now.leaderEpoch !== undefined && before.leaderEpoch !== undefined
            ? now.leaderEpoch - before.leaderEpoch - 1
            : 0;
        out.push({
          time: op.time,
          partition,
          text:
            `partition ${partition}: leader ${now.leader} (ISR [${now.isr.join(',')}]) by ${(op.time / 1000).toFixed(1)} s, ` +
            `not in the ISR [${before.isr.join(',')}] of leader ${before.leader} 5 s before` +
            (missed > 0 ? ` (${missed} election(s) between the two samples not seen)` : ''),
        });
      }
      last.set(partition, now);
    }
  }
  return out;
}

/** One partition in a `leaders` sample; leaderEpoch is absent in histories recorded before it was added. */
interface LeaderSample {
  leader: number;
  leaderEpoch?: number;
  isr: number[];
}
