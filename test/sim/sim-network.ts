// The simulated network of the data-plane simulation: every message between brokers, and between brokers and
// the controller, waits in one pending list until the seeded scheduler delivers it (in any order: reordering),
// drops it (its sender then times out on the manual clock), or lets it wait longer (delay). Messages that must
// stay in order (the controller's requests to one broker, sent over one connection in Kafka) carry a FIFO key:
// only the oldest message of a key may be delivered.
//
// Ownership: the simulation owns the network; a message is delivered or dropped exactly once.

import assert from 'node:assert/strict';

export interface Message {
  readonly id: number;
  /** What the trace prints: kind, sender and receiver. */
  readonly label: string;
  /** Messages of one key are delivered in the order they were sent; undefined for unordered ones. */
  readonly fifoKey?: string;
  /** Whether dropping it is allowed (the controller's requests are retried until answered, never lost). */
  readonly droppable: boolean;
  deliver(): void;
  drop(): void;
}

/** Bound of messages in flight: each fetcher has one request out at a time, so more means a leak. */
const PENDING_MAX = 10_000;

export class SimNetwork {
  private readonly pending: Message[] = [];
  private nextId = 0;

  get size(): number {
    return this.pending.length;
  }

  send(message: Omit<Message, 'id'>): void {
    assert.ok(this.pending.length < PENDING_MAX, `more than ${PENDING_MAX} messages in flight`);
    this.pending.push({ ...message, id: this.nextId++ });
  }

  /** The messages that may be delivered now: every unordered one and the oldest one of each FIFO key. */
  deliverable(): Message[] {
    const seen = new Set<string>();
    const out: Message[] = [];
    for (const m of this.pending) {
      if (m.fifoKey !== undefined) {
        if (seen.has(m.fifoKey)) continue;
        seen.add(m.fifoKey);
      }
      out.push(m);
    }
    return out;
  }

  /** Takes a message out of the network, to be delivered or dropped by the caller. */
  take(message: Message): Message {
    const i = this.pending.indexOf(message);
    assert.ok(i >= 0, `message ${message.id} is not in flight`);
    this.pending.splice(i, 1);
    return message;
  }
}
