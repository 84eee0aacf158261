// One broker of the data-plane simulation: Brook's real replica side (ReplicaManager, Partition, real logs in a
// directory of its own, the produce purgatory, the replica fetchers and the ISR manager), on the simulation's
// manual clock, reaching other brokers and the controller only through the simulated network.
//
// Lifecycle: start() opens the logs (recovering them after a crash) and builds the replica side afresh (a new
// incarnation); crash() drops everything in memory as kill -9 would, leaving the files as they are (written
// bytes survive: a process crash, not a power loss), and cuts off the file writes still on their way. A power
// loss also drops every write the recovery point does not cover (see unflushedCut).

import { truncateSync } from 'node:fs';
import { IsrManager, type LocalController } from '../../src/broker/cluster/isr-manager.js';
import type { LeaderEndPoint } from '../../src/broker/cluster/leader-end-point.js';
import { ReplicaFetchers } from '../../src/broker/cluster/replica-fetchers.js';
import { staticOnly } from '../../src/broker/config/config-layers.js';
import type { MetadataCache } from '../../src/broker/metadata/metadata-cache.js';
import { Purgatory } from '../../src/broker/purgatory.js';
import type { Partition } from '../../src/broker/replica/partition.js';
import { ReplicaManager } from '../../src/broker/replica/replica-manager.js';
import { TopicConfigs } from '../../src/broker/topic-configs.js';
import type { ManualClock } from '../../src/common/clock.js';
import type { BrokerId } from '../../src/common/ids.js';
import { silentLogger } from '../../src/common/logger.js';
import {
  INDEX_SUFFIX,
  LOG_SUFFIX,
  SNAPSHOT_SUFFIX,
  segmentFilePath,
  TIME_INDEX_SUFFIX,
} from '../../src/storage/file-names.js';
import type { Log } from '../../src/storage/log.js';
import { logConfig } from '../../src/storage/log-config.js';
import { LogManager } from '../../src/storage/log-manager.js';

export const LAG_TIME_MAX_MS = 1000;
export const FETCH_BACKOFF_MS = 100;
export const SOCKET_TIMEOUT_MS = 2000;
const PRODUCE_PURGATORY_MAX = 1000;

/** What a running incarnation of a broker holds; all of it is dropped by a crash. */
export interface Incarnation {
  readonly number: number;
  readonly logs: LogManager;
  readonly replicas: ReplicaManager;
  readonly purgatory: Purgatory;
  readonly fetchers: ReplicaFetchers;
  readonly isr: IsrManager;
}

export class SimBroker {
  running: Incarnation | null = null;
  /** The epoch of the running incarnation's registration (its fetches carry it, KIP-903); -1 before one. */
  brokerEpoch = -1;
  private incarnations = 0;
  private writesEndingCount = 0;

  constructor(
    readonly id: BrokerId,
    readonly dir: string,
    private readonly clock: ManualClock,
    private readonly minInsyncReplicas: number,
  ) {}

  get alive(): boolean {
    return this.running !== null;
  }

  /** The incarnation number of the running broker, or -1. */
  get incarnation(): number {
    return this.running?.number ?? -1;
  }

  /** Opens the logs and builds the replica side; the caller registers it and sets the ISR manager's broker epoch. */
  start(endPoints: (leaderId: number) => LeaderEndPoint, controller: LocalController): Incarnation {
    const clock = this.clock;
    const logs = LogManager.open({ dir: this.dir, clock, configFor: () => logConfig() });
    const topicConfigs = new TopicConfigs(
      staticOnly(new Map([['min.insync.replicas', String(this.minInsyncReplicas)]])),
    );
    const replicas = new ReplicaManager(
      this.id,
      logs,
      topicConfigs,
      silentLogger,
      () => logConfig(),
      clock,
      // The simulation has no metadata cache: a dead follower stops counting when its caught-up time runs out.
      { lagTimeMaxMs: LAG_TIME_MAX_MS, isAlive: () => true },
    );
    const purgatory = new Purgatory('produce', PRODUCE_PURGATORY_MAX, clock);
    // As the broker wires it: a write or a fetch that moved a high watermark completes waiting acks=all writes.
    replicas.onAppendWritten((p) => purgatory.checkAndComplete(p.key));
    const fetchers = new ReplicaFetchers(
      {
        brokerId: this.id,
        listenerName: 'PLAINTEXT',
        fetchMaxBytes: 1 << 20,
        responseMaxBytes: 10 << 20,
        waitMaxMs: 500,
        minBytes: 1,
        backoffMs: FETCH_BACKOFF_MS,
        socketTimeoutMs: SOCKET_TIMEOUT_MS,
        brokerEpoch: () => this.brokerEpoch,
      },
      replicas,
      { endpointFor: () => undefined } as unknown as Pick<MetadataCache, 'endpointFor'>,
      () => {},
      silentLogger,
      { clock, endPoints: endPoints },
    );
    const isr = new IsrManager(
      this.id,
      LAG_TIME_MAX_MS,
      'PLAINTEXT',
      replicas,
      {} as MetadataCache,
      controller,
      clock,
      (p) => purgatory.checkAndComplete(p.key),
      silentLogger,
    );
    isr.start();
    this.running = { number: ++this.incarnations, logs, replicas, purgatory, fetchers, isr };
    return this.running;
  }

  /**
   * kill -9: nothing in memory survives, files stay as written; no checkpoint, no clean-shutdown marker. With
   * `powerLoss`, the page cache dies too: each log loses every byte above its recovery point (the offset its
   * last fsync covered), the harshest outcome a power loss allows. Checkpoint files (written whole, fsync'ed,
   * renamed) survive as they were. Returns what was cut, for the trace.
   */
  crash(options: { powerLoss?: boolean } = {}): string[] {
    const r = this.running;
    if (r === null) return [];
    this.running = null;
    r.isr.stop();
    r.fetchers.stop();
    const cuts = options.powerLoss === true ? [...r.logs.allLogs()].map(unflushedCut) : [];
    // A killed process writes nothing more: every checkpoint write of this incarnation still on its way (in the
    // thread pool here, where a real one would have died with the process) is dropped before its rename, so none
    // can replace a file that the next incarnation has loaded. The simulation restarts the broker only once they
    // have ended (see writesEnding).
    const closing = [...[...r.logs.allLogs()].map((log) => log.abandon()), r.logs.abandon()];
    this.writesEndingCount++;
    void Promise.all(closing).finally(() => this.writesEndingCount--);
    return cuts.map((cut) => cut());
  }

  /** True while a crashed incarnation's dropped file writes are still ending (their tmp files being removed). */
  get writesEnding(): boolean {
    return this.writesEndingCount > 0;
  }

  partition(topic: string, index: number): Partition | undefined {
    return this.running?.replicas.get(topic, index);
  }
}

/**
 * Plans the loss of a log's unsynced writes while it is open; the returned step cuts the files once abandoned.
 * One rule for every file a flush fsyncs: what the recovery point does not cover is lost. Segment bytes from the
 * recovery point go; so do the indexes of segments wholly above it, and the producer snapshots written at rolls
 * whose fsync had not completed (left empty, the harshest of missing, empty or torn: recovery then takes an
 * older snapshot and replays from it).
 */
function unflushedCut(log: Log): () => string {
  const flushed = log.recoveryPoint;
  const end = log.logEndOffset;
  const steps: (() => void)[] = [];
  for (const segment of log.segmentList()) {
    const base = segment.baseOffset;
    const file = (suffix: string) => segmentFilePath(log.dir, base, suffix);
    if (base >= flushed) {
      // Wholly unflushed: the loss leaves the segment and its indexes empty (recovery rebuilds them from the log).
      for (const suffix of [LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX])
        steps.push(() => truncateIfPresent(file(suffix)));
    } else {
      const at = segment.translateOffset(flushed);
      if (at !== null) steps.push(() => truncateSync(file(LOG_SUFFIX), at.position));
    }
  }
  const snapshots = log.unsyncedSnapshotOffsets();
  for (const offset of snapshots)
    steps.push(() => truncateIfPresent(segmentFilePath(log.dir, offset, SNAPSHOT_SUFFIX)));
  return () => {
    for (const step of steps) step();
    const lostSnapshots =
      snapshots.length === 0 ? '' : `, unsynced producer snapshots at ${snapshots.join(', ')} emptied`;
    return `${log.topicPartition.topic}-${log.topicPartition.partition}: log end ${end}, bytes from offset ${flushed} lost${lostSnapshots}`;
  };
}

/** Empties `path`; a file that was never created (or already deleted) has nothing to lose. */
function truncateIfPresent(path: string): void {
  try {
    truncateSync(path, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
