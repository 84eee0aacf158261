// Fast failure detection: the hint that a broker's process is gone, long before its ZooKeeper session expires.
//
// Every `intervalMs` the prober opens a TCP connection to each registered broker's inter-broker listener (through
// the channel's `probe`), and closes it at once. A process that died (kill -9, a crash) leaves no listener: the
// connection is refused. `refusalsToFence` refusals in a row (the first one confirmed after 50 ms, not at the next
// round), with no answered probe between them, make the broker
// a suspect, and `onSuspect` is called once per registration (broker epoch). The prober decides nothing itself:
// the controller then fences the broker through the metadata store (it deletes the registration whose broker
// epoch it suspected, in a transaction guarded by its controller epoch), and only that write makes the broker
// dead for the cluster. A paused process (SIGSTOP, a long GC pause, a frozen VM) still has its listening socket,
// whose connections the kernel accepts: it is never suspected here, and only its session's expiry removes it, as
// before. A timeout or any other error is not a refusal either: a slow or partitioned network is the session's
// business, not the hint's.
//
// Ownership: the Controller owns one prober; it runs while the controller is active.

import type { BrokerId } from '../common/ids.js';

/** The wait before a refusal is confirmed by the next probe: a listener being rebound is back by then. */
const CONFIRM_DELAY_MS = 50;

export type ProbeResult = 'refused' | 'reachable' | 'unknown';

export interface LivenessProbeOptions {
  readonly intervalMs: number;
  readonly refusalsToFence: number;
  /** The brokers to watch, with their current broker epochs (the controller's live brokers but itself). */
  readonly brokers: () => Iterable<readonly [BrokerId, number]>;
  readonly probe: (broker: BrokerId) => Promise<ProbeResult>;
  readonly onSuspect: (broker: BrokerId, epoch: number) => void;
}

interface Watched {
  epoch: number;
  refusals: number;
  inFlight: boolean;
  reported: boolean;
}

export class LivenessProber {
  private timer: NodeJS.Timeout | null = null;
  private readonly watched = new Map<BrokerId, Watched>();
  private stopped = false;

  constructor(private readonly options: LivenessProbeOptions) {}

  start(): void {
    if (this.timer !== null || this.options.intervalMs <= 0) return;
    this.timer = setInterval(() => this.tick(), this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.stopped = true;
    this.watched.clear();
  }

  /** One round of probes (the timer calls it; tests may too). */
  tick(): void {
    const current = new Map(this.options.brokers());
    for (const id of [...this.watched.keys()]) if (!current.has(id)) this.watched.delete(id);
    for (const [id, epoch] of current) {
      let w = this.watched.get(id);
      if (w === undefined || w.epoch !== epoch) {
        w = { epoch, refusals: 0, inFlight: false, reported: false };
        this.watched.set(id, w);
      }
      this.probeOne(id, w);
    }
  }

  /** Probes one broker; a refusal short of the count is confirmed at once rather than at the next round. */
  private probeOne(id: BrokerId, watched: Watched): void {
    if (watched.inFlight || watched.reported || this.stopped) return;
    watched.inFlight = true;
    this.options
      .probe(id)
      .catch((): ProbeResult => 'unknown')
      .then((result) => {
        watched.inFlight = false;
        if (this.watched.get(id) !== watched) return;
        if (result === 'reachable') watched.refusals = 0;
        if (result !== 'refused') return;
        watched.refusals++;
        if (watched.refusals < this.options.refusalsToFence) {
          setTimeout(() => this.probeOne(id, watched), CONFIRM_DELAY_MS).unref();
          return;
        }
        watched.reported = true;
        this.options.onSuspect(id, watched.epoch);
      });
  }
}
