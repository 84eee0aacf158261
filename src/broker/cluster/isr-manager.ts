// The leader's side of ISR changes: every half replica.lag.time.max.ms it looks at the partitions it leads,
// and for each whose ISR should shrink (a follower fell behind) or grow (a follower caught up) it sends
// AlterPartition to the controller, directly when the controller runs here, over the wire otherwise. The
// controller writes the new ISR with a conditional write on the partition state and answers with it; only then
// does the leader use it (KIP-497), so the leader and ZooKeeper never disagree about who is in sync.
//
// Until a proposal is settled the high watermark counts the replicas it adds (Partition's maximal ISR). An answer
// settles it only when it says what the controller did (Kafka's Partition.handleAlterPartitionError):
// - accepted: the new ISR is used;
// - OPERATION_NOT_ATTEMPTED or INELIGIBLE_REPLICA: certainly not applied, the committed ISR counts again;
// - FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, an unknown partition, NOT_LEADER_OR_FOLLOWER, INVALID_REQUEST:
//   this leader's view is out of date; the proposal stays pending, unsent, until a LeaderAndIsr replaces it;
// - anything else (a lost connection, a timeout, NOT_CONTROLLER, an UNKNOWN_SERVER_ERROR from a controller whose
//   store write lost its answer): the outcome is unknown, and the proposal stays pending and is sent again at the
//   next check. Dropping it there let a leader acknowledge writes with a smaller ISR than the one the controller
//   had committed, from which the next controller then elected a replica that lacked them (chaos finding F4).

import type { Clock, Timer } from '../../common/clock.js';
import { asBrokerIds, type BrokerId } from '../../common/ids.js';
import type { Logger } from '../../common/logger.js';
import type { Controller } from '../../controller/controller.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  AlterPartitionRequest,
  AlterPartitionResponse,
} from '../../protocol/messages/56-alter-partition.js';
import { ZERO_UUID } from '../../protocol/messages/codec-support.js';
import { ApiKey } from '../../protocol/registry.js';
import type { InterBrokerSecurity } from '../../security/inter-broker.js';
import type { MetadataCache } from '../metadata/metadata-cache.js';
import type { Partition } from '../replica/partition.js';
import type { ReplicaManager } from '../replica/replica-manager.js';
import { InterBrokerConnection } from './inter-broker-connection.js';

/** Topic names and the plain ISR list: for a partition whose topic id is not known here. */
const ALTER_PARTITION_VERSION_BY_NAME = 1;
/** Topic ids and each ISR member's broker epoch (newIsrWithEpochs, KIP-903). */
const ALTER_PARTITION_VERSION = 3;
const REQUEST_TIMEOUT_MS = 30_000;

/** What an answer to AlterPartition does with the proposal it answers. */
export type IsrAnswerAction = 'accepted' | 'reset' | 'wait' | 'retry';

const WAIT_FOR_METADATA: ReadonlySet<number> = new Set([
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.INVALID_UPDATE_VERSION,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.UNKNOWN_TOPIC_ID,
  ErrorCode.INVALID_REQUEST,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.NEW_LEADER_ELECTED,
]);

/**
 * The action for one partition's answer (see the file header): `topLevel` is the response's error code, or null
 * when no response came (the request failed); `partition` the partition's own code, undefined when the response
 * does not name it.
 */
export function isrAnswerAction(topLevel: number | null, partition: number | undefined): IsrAnswerAction {
  if (topLevel === null || topLevel !== ErrorCode.NONE || partition === undefined) return 'retry';
  if (partition === ErrorCode.NONE) return 'accepted';
  if (partition === ErrorCode.OPERATION_NOT_ATTEMPTED || partition === ErrorCode.INELIGIBLE_REPLICA)
    return 'reset';
  return WAIT_FOR_METADATA.has(partition) ? 'wait' : 'retry';
}

/** What the ISR manager needs of the controller in this process (a narrow view, so that tests can script it). */
export type LocalController = Pick<Controller, 'isActive' | 'alterPartition'>;

export class IsrManager {
  private timer: Timer | null = null;
  /** Partitions whose proposal is on its way to the controller (at most one request each). */
  private readonly inFlight = new Set<Partition>();
  /** Partitions whose proposal had an unknown outcome: sent again, unchanged, at the next check. */
  private readonly retries = new Set<Partition>();
  private connection: { controllerId: number; connection: InterBrokerConnection } | null = null;
  brokerEpoch = -1;
  /** ISR changes the controller accepted from this leader, for IsrShrinksPerSec and IsrExpandsPerSec. */
  readonly isrChanges = { shrinks: 0, expands: 0 };

  constructor(
    private readonly brokerId: BrokerId,
    private readonly lagTimeMaxMs: number,
    private readonly listenerName: string,
    private readonly replicas: Pick<ReplicaManager, 'all'>,
    private readonly metadata: MetadataCache,
    private readonly controller: LocalController,
    private readonly clock: Clock,
    private readonly onHighWatermark: (p: Partition) => void,
    private readonly logger: Logger,
    private readonly security?: InterBrokerSecurity,
  ) {}

  /** Checks every half replica.lag.time.max.ms (at least every 100 ms) until stop(), on the clock's timers. */
  start(): void {
    const periodMs = Math.max(100, Math.floor(this.lagTimeMaxMs / 2));
    const arm = (): void => {
      this.timer = this.clock
        .setTimer(periodMs, () => {
          if (this.timer === null) return;
          arm();
          this.check();
        })
        .unref();
    };
    arm();
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = null;
    this.connection?.connection.close();
  }

  /** Resolves when every AlterPartition sent so far has been answered or has failed (for tests). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await new Promise((r) => setTimeout(r, 5));
  }

  check(): void {
    const now = this.clock.monotonicMs();
    const wallNow = this.clock.nowMs();
    const hosted = [...this.replicas.all()];
    if (this.retries.size > 0) {
      const present = new Set(hosted);
      for (const p of this.retries) {
        // Settled meanwhile by a LeaderAndIsr (a new proposal, or none), no longer led here, or no longer hosted
        // (StopReplica): nothing to resend.
        if (!present.has(p) || !p.isLeader || p.pendingIsrChange === null || this.inFlight.has(p))
          this.retries.delete(p);
      }
    }
    for (const p of hosted) {
      if (this.inFlight.has(p)) continue;
      let isr: readonly BrokerId[] | null;
      if (this.retries.delete(p)) {
        isr = p.pendingIsrChange;
        if (isr === null) continue;
        this.logger.info(
          `proposing ISR ${JSON.stringify(isr)} for ${p.key} again (outcome unknown) at ${now}`,
        );
      } else {
        isr = p.proposedIsr(wallNow, this.lagTimeMaxMs);
        if (isr === null) continue;
        p.isrChangeSent(isr);
        this.logger.info(
          `proposing ISR ${JSON.stringify(isr)} for ${p.key} (was ${JSON.stringify(p.isr)}) at ${now}`,
        );
      }
      this.propose(p, isr);
    }
  }

  private propose(p: Partition, isr: readonly BrokerId[]): void {
    this.inFlight.add(p);
    this.send(p, isr)
      .then(
        (response) => this.answered(p, isr, response),
        (err: unknown) => {
          this.logger.warn(
            `AlterPartition for ${p.key} failed (outcome unknown, will retry): ${String(err)}`,
          );
          this.settle(p, isr, 'retry');
        },
      )
      .finally(() => this.inFlight.delete(p));
  }

  private async send(p: Partition, isr: readonly BrokerId[]): Promise<AlterPartitionResponse> {
    const byId = p.topicId !== '' && p.topicId !== ZERO_UUID;
    const version = byId ? ALTER_PARTITION_VERSION : ALTER_PARTITION_VERSION_BY_NAME;
    const request: AlterPartitionRequest = {
      brokerId: this.brokerId,
      brokerEpoch: BigInt(this.brokerEpoch),
      topics: [
        {
          topicName: p.topic,
          topicId: p.topicId || ZERO_UUID,
          partitions: [
            {
              partitionIndex: p.partition,
              leaderEpoch: p.leaderEpoch,
              newIsr: [...isr],
              // The epoch of each member as its last fetch here gave it (this broker's own for itself): the
              // controller refuses the change when one is not that broker's current epoch, so an ISR grown from a
              // follower's state before it restarted (and maybe lost what it had not flushed) does not stand.
              newIsrWithEpochs: byId
                ? isr.map((id) => ({
                    brokerId: id,
                    brokerEpoch: BigInt(id === this.brokerId ? this.brokerEpoch : p.followerBrokerEpoch(id)),
                  }))
                : [],
              // RECOVERED: a leader elected uncleanly (RECOVERING, KIP-704) has nothing to recover in this
              // log format and counts itself recovered when it takes over, as Kafka's ZooKeeper-mode brokers do;
              // its first ISR change tells the controller so.
              leaderRecoveryState: 0,
              partitionEpoch: p.partitionEpoch,
            },
          ],
        },
      ],
    };
    if (this.controller.isActive) return this.controller.alterPartition(request, version);
    const controllerId = this.metadata.controllerId;
    if (this.connection?.controllerId !== controllerId) {
      this.connection?.connection.close();
      const endpoint = this.metadata.endpointFor(controllerId, this.listenerName);
      if (endpoint === undefined) throw new Error(`controller ${controllerId} has no known endpoint`);
      this.connection = {
        controllerId,
        connection: new InterBrokerConnection(
          endpoint.host,
          endpoint.port,
          `broker-${this.brokerId}-isr`,
          this.security,
        ),
      };
    }
    return this.connection.connection.request<AlterPartitionResponse>(
      ApiKey.ALTER_PARTITION,
      version,
      request,
      REQUEST_TIMEOUT_MS,
    );
  }

  private answered(p: Partition, isr: readonly BrokerId[], response: AlterPartitionResponse): void {
    const result = response.topics[0]?.partitions[0];
    const action = isrAnswerAction(response.errorCode, result?.errorCode);
    if (action === 'accepted' && result !== undefined) {
      if (p.pendingIsrChange !== isr || !p.isrAnswerCurrent(result.leaderEpoch, result.partitionEpoch)) {
        // A LeaderAndIsr came meanwhile: it is newer than this answer (Kafka ignores such an answer too).
        return;
      }
      const before = p.isr;
      const moved = p.applyIsr(asBrokerIds(result.isr), result.leaderEpoch, result.partitionEpoch);
      if (p.isr !== before) {
        if (before.some((id) => !p.isr.includes(id))) this.isrChanges.shrinks++;
        if (p.isr.some((id) => !before.includes(id))) this.isrChanges.expands++;
      }
      const ended = p.isrChangeEnded(isr);
      if (moved || ended) this.onHighWatermark(p);
      return;
    }
    const code = response.errorCode !== ErrorCode.NONE ? response.errorCode : (result?.errorCode ?? -1);
    this.logger.warn(
      `AlterPartition for ${p.key} refused: error ${code} (${action === 'reset' ? 'not applied' : action === 'wait' ? 'waiting for LeaderAndIsr' : 'outcome unknown, will retry'})`,
    );
    this.settle(p, isr, action);
  }

  private settle(p: Partition, isr: readonly BrokerId[], action: IsrAnswerAction): void {
    if (p.pendingIsrChange !== isr) return;
    if (action === 'reset') {
      if (p.isrChangeEnded(isr)) this.onHighWatermark(p);
    } else if (action === 'retry') {
      this.retries.add(p);
    }
  }
}
