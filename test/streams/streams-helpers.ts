// Helpers of the streams tests that run through a broker: seeded input, a reader that follows a topic's
// latest value per key, and a temporary state directory.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Consumer } from '../../src/client/consumer.js';

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function stateDir(): string {
  return mkdtempSync(join(tmpdir(), 'brook-streams-state-'));
}

/** Reads a topic from the beginning on all partitions (no group), keeping every record and the last per key. */
export class TopicFollower {
  readonly latest = new Map<string, Buffer | null>();
  readonly records: { key: string; value: Buffer | null; partition: number; offset: number }[] = [];
  private readonly consumer: Consumer;
  private running = true;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    bootstrap: string,
    private readonly topic: string,
    private readonly partitions: number,
  ) {
    this.consumer = new Consumer({ bootstrapServers: bootstrap, autoOffsetReset: 'earliest' });
  }

  start(): void {
    this.consumer.assign(
      Array.from({ length: this.partitions }, (_, partition) => ({ topic: this.topic, partition })),
    );
    this.loop = (async () => {
      while (this.running) {
        for (const r of await this.consumer.poll(100)) {
          const key = r.key?.toString('utf8') ?? '';
          this.latest.set(key, r.value);
          this.records.push({ key, value: r.value, partition: r.partition, offset: r.offset });
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop.catch(() => {});
    await this.consumer.close();
  }
}
