// How topic administration waits for its changes to take effect. On the controller's own broker the controller
// is asked (it resolves once it has acted and every broker answered); on any other broker, as Kafka does in
// ZooKeeper mode, the call waits until this broker's metadata cache shows the change, or a time bound passes.

import type { Clock } from '../../common/clock.js';
import type { Controller } from '../../controller/controller.js';
import type { PropagationWaiter as Waiter } from '../../controller/topic-admin.js';
import type { MetadataCache } from '../metadata/metadata-cache.js';

const WAIT_MAX_MS = 10_000;
const POLL_MS = 20;

export class PropagationWaiter implements Waiter {
  constructor(
    private readonly controller: Controller,
    private readonly metadata: MetadataCache,
    private readonly clock: Clock,
  ) {}

  async sync(topics: readonly string[]): Promise<void> {
    if (this.controller.isActive) {
      await this.controller.sync(topics);
      return;
    }
    // Created topics appear with leaders, deleted ones disappear; either way the cache changes to a settled state.
    const started = this.clock.monotonicMs();
    const initial = new Map(topics.map((t) => [t, this.describe(t)]));
    while (this.clock.monotonicMs() - started < WAIT_MAX_MS) {
      if (topics.every((t) => this.describe(t) !== initial.get(t) && this.settled(t))) return;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  private describe(topic: string): string {
    const t = this.metadata.topic(topic);
    return t === undefined ? 'absent' : `${t.topicId}:${t.partitions.length}`;
  }

  private settled(topic: string): boolean {
    const t = this.metadata.topic(topic);
    return t === undefined || t.partitions.every((p) => p.leader >= 0);
  }
}
