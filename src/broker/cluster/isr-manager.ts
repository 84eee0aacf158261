// The leader's side of ISR changes: every half replica.lag.time.max.ms it looks at the partitions it leads,
// and for each whose ISR should shrink (a follower fell behind) or grow (a follower caught up) it sends
// AlterPartition to the controller, directly when the controller runs here, over the wire otherwise. The
// controller writes the new ISR with a conditional write on the partition state and answers with it; only then
// does the leader use it (KIP-497), so the leader and ZooKeeper never disagree about who is in sync.

import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import type { Controller } from '../../controller/controller.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  AlterPartitionRequest,
  AlterPartitionResponse,
} from '../../protocol/messages/56-alter-partition.js';
import { ApiKey } from '../../protocol/registry.js';
import type { InterBrokerSecurity } from '../../security/inter-broker.js';
import type { MetadataCache } from '../metadata/metadata-cache.js';
import type { Partition } from '../replica/partition.js';
import type { ReplicaManager } from '../replica/replica-manager.js';
import { InterBrokerConnection } from './inter-broker-connection.js';

/** Names (not topic ids) and the plain ISR list. */
const ALTER_PARTITION_VERSION = 1;
const REQUEST_TIMEOUT_MS = 30_000;
const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

export class IsrManager {
  private timer: NodeJS.Timeout | null = null;
  private connection: { controllerId: number; connection: InterBrokerConnection } | null = null;
  brokerEpoch = -1;
  /** ISR changes the controller accepted from this leader, for IsrShrinksPerSec and IsrExpandsPerSec. */
  readonly isrChanges = { shrinks: 0, expands: 0 };

  constructor(
    private readonly brokerId: number,
    private readonly lagTimeMaxMs: number,
    private readonly listenerName: string,
    private readonly replicas: ReplicaManager,
    private readonly metadata: MetadataCache,
    private readonly controller: Controller,
    private readonly clock: Clock,
    private readonly onHighWatermark: (p: Partition) => void,
    private readonly logger: Logger,
    private readonly security?: InterBrokerSecurity,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.check(), Math.max(100, Math.floor(this.lagTimeMaxMs / 2)));
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.connection?.connection.close();
  }

  check(): void {
    const now = this.clock.monotonicMs();
    const wallNow = Date.now();
    for (const p of this.replicas.all()) {
      const isr = p.proposedIsr(wallNow, this.lagTimeMaxMs);
      if (isr === null) continue;
      p.isrChangeSent(isr);
      this.logger.info(
        `proposing ISR ${JSON.stringify(isr)} for ${p.key} (was ${JSON.stringify(p.isr)}) at ${now}`,
      );
      this.send(p, isr)
        .then((response) => this.apply(p, response))
        .catch((err: unknown) => this.logger.warn(`AlterPartition for ${p.key} failed: ${String(err)}`))
        .finally(() => {
          if (p.isrChangeEnded(isr)) this.onHighWatermark(p);
        });
    }
  }

  private async send(p: Partition, isr: number[]): Promise<AlterPartitionResponse> {
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
              newIsr: isr,
              newIsrWithEpochs: [],
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
    if (this.controller.isActive) return this.controller.alterPartition(request, ALTER_PARTITION_VERSION);
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
      ALTER_PARTITION_VERSION,
      request,
      REQUEST_TIMEOUT_MS,
    );
  }

  private apply(p: Partition, response: AlterPartitionResponse): void {
    if (response.errorCode !== ErrorCode.NONE) {
      this.logger.warn(`AlterPartition for ${p.key} refused: error ${response.errorCode}`);
      return;
    }
    const result = response.topics[0]?.partitions[0];
    if (result === undefined) return;
    if (result.errorCode !== ErrorCode.NONE) {
      this.logger.warn(`AlterPartition for ${p.key} refused: error ${result.errorCode}`);
      return;
    }
    const before = p.isr;
    const applied = p.applyIsr(result.isr, result.leaderEpoch, result.partitionEpoch);
    if (p.isr !== before) {
      if (before.some((id) => !p.isr.includes(id))) this.isrChanges.shrinks++;
      if (p.isr.some((id) => !before.includes(id))) this.isrChanges.expands++;
    }
    if (applied) this.onHighWatermark(p);
  }
}
