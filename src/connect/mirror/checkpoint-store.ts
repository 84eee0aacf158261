// The checkpoints a MirrorCheckpointTask has emitted, per consumer group and remote partition (Kafka's
// CheckpointStore, KAFKA-15905). At start the task reads `<source>.checkpoints.internal` on the target to its end
// (Connect's KafkaBasedLog, then stopped) and keeps the newest checkpoint of each of its groups; afterwards it
// records every checkpoint it emits. A new checkpoint is emitted only when it is the first for its partition, when
// the group's upstream offset went back (a reset), or when its downstream offset is further than the last one:
// so a translation that comes out coarser after a restart (older offset syncs are kept sparsely) never moves a
// group back on the target. When the topic cannot be read the store starts empty and load() says so; the task
// then loads only the newest offset sync per partition, the behaviour before this store (no translation from
// syncs older than the restart, so none coarser than what was emitted).

import type { ClientOptions } from '../../client/index.js';
import type { Logger } from '../../common/logger.js';
import { KafkaBasedLog } from '../runtime/distributed/kafka-based-log.js';
import { CONNECT_LOGGERS } from '../runtime/loggers.js';
import { MIRROR_LOGGERS } from './log.js';
import { type Checkpoint, decodeCheckpoint } from './records.js';

export function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

export class CheckpointStore {
  private readonly byGroup = new Map<string, Map<string, Checkpoint>>();

  constructor(private readonly groups: ReadonlySet<string>) {}

  /** Reads the checkpoints topic to its end; false when it could not be read (the store is then empty). */
  async load(
    topic: string,
    client: ClientOptions,
    replicationFactor: number,
    /** The task's loggers by Kafka class name (mirrorLogger with the task's context and flow). */
    logger: (name: string) => Logger,
  ): Promise<boolean> {
    const log = logger(MIRROR_LOGGERS.checkpointStore);
    const { bootstrapServers, clientId, ...security } = client;
    const reader = new KafkaBasedLog({
      topic,
      bootstrapServers: Array.isArray(bootstrapServers) ? bootstrapServers.join(',') : bootstrapServers,
      clientId: `${clientId ?? 'mirror'}-checkpoints-reader`,
      partitions: 1,
      replicationFactor,
      clientOptions: security,
      log: logger(CONNECT_LOGGERS.kafkaBasedLog),
      onRecord: (r) => {
        if (r.key === null || r.value === null) return;
        let cp: Checkpoint;
        try {
          cp = decodeCheckpoint(r.key, r.value);
        } catch (err) {
          log.warn(
            `Ignoring an invalid checkpoint at ${topic} offset ${r.offset}: ${(err as Error).message}`,
          );
          return;
        }
        if (this.groups.has(cp.group)) this.put(cp);
      },
    });
    try {
      await reader.start();
      return true;
    } catch (err) {
      this.byGroup.clear();
      log.info(
        `Could not read the checkpoints in ${topic}, starting without them: ${(err as Error).message}`,
      );
      return false;
    } finally {
      await reader.stop();
    }
  }

  private put(cp: Checkpoint): void {
    let group = this.byGroup.get(cp.group);
    if (group === undefined) this.byGroup.set(cp.group, (group = new Map()));
    group.set(partitionKey(cp.topic, cp.partition), cp);
  }

  get(group: string): ReadonlyMap<string, Checkpoint> | undefined {
    return this.byGroup.get(group);
  }

  groupsWithCheckpoints(): IterableIterator<[string, ReadonlyMap<string, Checkpoint>]> {
    return this.byGroup.entries();
  }

  /** Kafka's checkpointIsMoreRecent: the first for its partition, after a rewind, or further downstream. */
  isMoreRecent(cp: Checkpoint): boolean {
    const last = this.byGroup.get(cp.group)?.get(partitionKey(cp.topic, cp.partition));
    if (last === undefined) return true;
    return cp.upstreamOffset < last.upstreamOffset || cp.downstreamOffset > last.downstreamOffset;
  }

  /** Records checkpoints that were emitted. */
  update(checkpoints: readonly Checkpoint[]): void {
    for (const cp of checkpoints) this.put(cp);
  }
}
