// Purging of a stream thread's repartition topics (Kafka's TaskManager.maybePurgeCommittedRecords): once records
// of a repartition topic are committed as consumed, no task of the application reads them again, so the thread
// deletes them (DeleteRecords) up to the committed offset of each partition it reads. The application owns these
// topics (`<application.id>-<name>-repartition`); user topics are never purged, whoever reads them.
//
// As Kafka: tried at most every repartition.purge.interval.ms, from the commit loop; one request at a time (while
// one is out, a due purge is skipped, the next one carries newer offsets anyway); a failed request is logged and
// not retried, since none of its errors (a moved leader, a deleted topic) is fatal to the application.
//
// Owned by one StreamThread; its admin client is opened on the first purge and closed with the thread.

import { Admin } from '../../client/admin.js';
import type { ResolvedConfig } from '../config.js';
import { topicPartitionOfKey } from './partition-key.js';

export class RepartitionPurger {
  private admin: Admin | null = null;
  private inFlight: Promise<void> | null = null;
  private lastPurgeMs = Date.now();
  /** Purge requests sent since start (for tests and metrics). */
  requests = 0;

  constructor(
    private readonly config: ResolvedConfig,
    private readonly clientId: string,
    private readonly log: (message: string) => void,
  ) {}

  /**
   * Called after each commit interval's commit with "real topic:partition" -> the committed offset of every
   * repartition partition the thread's active tasks read; deletes the records before those offsets when the
   * purge interval has passed and no earlier request is still out.
   */
  maybePurge(committed: ReadonlyMap<string, number>, nowMs: number): void {
    if (nowMs - this.lastPurgeMs <= this.config.repartitionPurgeIntervalMs) return;
    this.lastPurgeMs = nowMs;
    if (this.inFlight !== null || committed.size === 0) return;
    const requests = [...committed].map(([tp, offset]) => ({ ...topicPartitionOfKey(tp), offset }));
    this.admin ??= new Admin({
      ...this.config.clients.admin,
      bootstrapServers: this.config.bootstrapServers,
      clientId: `${this.clientId}-admin`,
    });
    this.requests++;
    this.inFlight = this.admin
      .deleteRecords(requests)
      .then((results) => {
        for (const r of results)
          if (r.error !== null)
            this.log(
              `purging ${r.topic}-${r.partition} failed: ${r.error.message}; the next purge tries again`,
            );
      })
      .catch((e: unknown) => this.log(`purging repartition topics failed: ${(e as Error).message}`))
      .finally(() => {
        this.inFlight = null;
      });
  }

  /** Waits for a request still out, then closes the admin client. */
  async close(): Promise<void> {
    await this.inFlight;
    await this.admin?.close().catch(() => {});
    this.admin = null;
  }
}
