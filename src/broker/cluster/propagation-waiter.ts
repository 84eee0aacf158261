// How topic administration waits for its changes to take effect. Without a request's timeout (the broker's own
// calls), on the controller's own broker the controller is asked (it resolves once it has acted and every broker
// answered); on any other broker the call waits until this broker's metadata cache shows the change, or a time
// bound passes. With a request's timeout (CreateTopics, DeleteTopics, CreatePartitions), as Kafka's ZooKeeper-mode
// broker does, every broker waits until its own metadata shows each change done, at most that long: a deleted
// topic is done once the controller has told the brokers, however long a replica on a silent broker takes to be
// deleted. The controller's broker still asks the controller to act at once.

import type { Clock } from '../../common/clock.js';
import type { Controller } from '../../controller/controller.js';
import type { TopicChange, PropagationWaiter as Waiter } from '../../controller/topic-admin.js';
import type { MetadataCache, TopicInfo } from '../metadata/metadata-cache.js';

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

  async awaitChanges(changes: readonly TopicChange[], timeoutMs: number): Promise<ReadonlySet<string>> {
    if (this.controller.isActive) {
      // Asked to look now rather than when its watches fire; what it sends is what this waits to see.
      this.controller
        .sync(
          changes.map((c) => c.topic),
          timeoutMs,
        )
        .catch(() => {});
    }
    const started = this.clock.monotonicMs();
    for (;;) {
      const done = new Set(changes.filter((c) => this.shows(c)).map((c) => c.topic));
      if (done.size === changes.length || this.clock.monotonicMs() - started >= timeoutMs) return done;
      await new Promise((r) => setTimeout(r, Math.min(POLL_MS, timeoutMs)));
    }
  }

  /** Whether this broker's metadata shows `change` done. */
  private shows(change: TopicChange): boolean {
    const t = this.metadata.topic(change.topic);
    switch (change.kind) {
      case 'created':
        return t !== undefined && t.topicId === change.topicId && everyPartitionLed(t);
      case 'partitions':
        return t !== undefined && t.partitions.length >= change.count && everyPartitionLed(t);
      case 'deleted':
        return t === undefined || t.topicId !== change.topicId;
    }
  }

  private describe(topic: string): string {
    const t = this.metadata.topic(topic);
    return t === undefined ? 'absent' : `${t.topicId}:${t.partitions.length}`;
  }

  private settled(topic: string): boolean {
    const t = this.metadata.topic(topic);
    return t === undefined || everyPartitionLed(t);
  }
}

function everyPartitionLed(topic: TopicInfo): boolean {
  return topic.partitions.every((p) => p.leader >= 0);
}
