// The controller's single event queue (Kafka's ControllerEventManager): events run one at a time, in order, and
// only events change the controller's state. An event may await store I/O, but it applies what it learned in
// synchronous steps, so no other event ever sees a half-made change.
//
// Watch notifications are coalesced by key: a watch event already waiting is not queued twice, because each of
// them re-reads the store and a second one would find nothing new. That also bounds them: at most one waiting
// event per key. Requests from brokers (AlterPartition, ControlledShutdown, ElectLeaders) are bounded by
// REQUEST_EVENTS_MAX; beyond it the caller answers an error instead of queueing.

import { performance } from 'node:perf_hooks';
import type { Logger } from '../common/logger.js';

/** Requests from brokers and clients that may wait in the queue at once. */
export const REQUEST_EVENTS_MAX = 10_000;

interface QueuedEvent {
  readonly name: string;
  readonly key: string | null;
  readonly run: () => Promise<void>;
  /** performance.now() when queued: the metrics' EventQueueTimeMs. */
  readonly queuedAt: number;
}

/** Told after each event ran: its name, the ms it waited in the queue and the ms it ran (the metrics). */
export type EventObserver = (name: string, queueMs: number, runMs: number) => void;

export class EventQueue {
  private readonly events: QueuedEvent[] = [];
  private readonly waitingKeys = new Set<string>();
  private running = false;
  private idleWaiters: (() => void)[] = [];
  private requestCount = 0;
  /** Set by the metrics endpoint when the broker has one; events are rare, so timing each costs nothing. */
  observer: EventObserver | null = null;

  constructor(private readonly logger: Logger) {}

  /** Queues an event; with a key, nothing is queued while an event with that key is still waiting. */
  enqueue(name: string, run: () => Promise<void>, key: string | null = null): void {
    if (key !== null) {
      if (this.waitingKeys.has(key)) return;
      this.waitingKeys.add(key);
    }
    this.events.push({ name, key, run, queuedAt: performance.now() });
    this.kick();
  }

  /** Queues a request event whose result the caller awaits; null when the queue holds too many already. */
  request<T>(name: string, run: () => Promise<T>): Promise<T> | null {
    if (this.requestCount >= REQUEST_EVENTS_MAX) return null;
    this.requestCount += 1;
    return new Promise<T>((resolve, reject) => {
      this.enqueue(name, async () => {
        this.requestCount -= 1;
        try {
          resolve(await run());
        } catch (e) {
          reject(e);
        }
      });
    });
  }

  get size(): number {
    return this.events.length + (this.running ? 1 : 0);
  }

  /** Resolves once the queue is empty and no event runs. */
  idle(): Promise<void> {
    if (!this.running && this.events.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private kick(): void {
    if (this.running) return;
    this.running = true;
    void this.drain();
  }

  private async drain(): Promise<void> {
    while (this.events.length > 0) {
      const event = this.events.shift()!;
      if (event.key !== null) this.waitingKeys.delete(event.key);
      const startedAt = performance.now();
      try {
        await event.run();
      } catch (e) {
        // An exception is a bug or a failure of the store's own files; the controller logs it and goes on with
        // the next event, as Kafka's controller does.
        this.logger.error(`controller event ${event.name} failed: ${(e as Error).stack ?? String(e)}`);
      }
      this.observer?.(event.name, startedAt - event.queuedAt, performance.now() - startedAt);
    }
    this.running = false;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
