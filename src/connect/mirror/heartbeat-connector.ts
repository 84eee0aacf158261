// MirrorHeartbeatConnector (org.apache.kafka.connect.mirror.MirrorHeartbeatConnector): one task writes a
// Heartbeat record (source alias, target alias, timestamp) to the target's `heartbeats` topic every
// emit.heartbeats.interval.seconds. Mirrored onwards by other flows (`A.heartbeats`), heartbeats show that a flow is
// alive end to end, and Kafka's RemoteClusterUtils finds upstream clusters through them.

import { Admin } from '../../client/index.js';
import type { ConfigDef } from '../api/config-def.js';
import { SourceConnector, type SourceOffsets, SourceTask, type TaskConfig } from '../api/connector.js';
import { SourceRecord } from '../api/records.js';
import { Schemas } from '../data/schema.js';
import { InterruptibleSleep } from '../runtime/interruptible-sleep.js';
import { BROOK_CONNECT_VERSION } from '../version.js';
import { MIRROR_LOGGERS, mirrorLogger } from './log.js';
import { MirrorConfig } from './mirror-config.js';
import { MIRROR_HEARTBEAT_PARTITIONS, validateMirrorOffsets } from './offsets-validation.js';
import { encodeHeartbeatKey, encodeHeartbeatValue } from './records.js';
import { ensureInternalTopic, mirrorConfigDef } from './source-connector.js';

export class MirrorHeartbeatConnector extends SourceConnector {
  static readonly className = 'org.apache.kafka.connect.mirror.MirrorHeartbeatConnector';
  private props: Record<string, string> = {};
  private enabled = true;

  version(): string {
    return BROOK_CONNECT_VERSION;
  }

  /** KIP-875, as Kafka's: the task never reads its offsets back, so they need only fit (offsets-validation.ts). */
  override alterOffsets(_props: Record<string, string>, offsets: SourceOffsets): boolean {
    return validateMirrorOffsets(offsets, MIRROR_HEARTBEAT_PARTITIONS);
  }
  config(): ConfigDef {
    return mirrorConfigDef();
  }

  async start(props: Record<string, string>): Promise<void> {
    this.props = { ...props };
    const c = new MirrorConfig(props);
    // A negative interval turns heartbeats off, as in Kafka.
    this.enabled = c.bool('emit.heartbeats.enabled') && c.intervalMs('emit.heartbeats') >= 0;
    if (!this.enabled) return;
    const target = new Admin(
      c.clientOptions('target', `${c.sourceAlias}->${c.targetAlias}|heartbeat-admin`, 'admin'),
    );
    try {
      await ensureInternalTopic(
        target,
        c.policy.heartbeatsTopic(),
        c.int('heartbeats.topic.replication.factor'),
        mirrorLogger(this.context, MIRROR_LOGGERS.utils, `${c.sourceAlias}->${c.targetAlias}`),
      );
    } finally {
      await target.close();
    }
  }

  taskClass() {
    return MirrorHeartbeatTask;
  }

  taskConfigs(): TaskConfig[] {
    return this.enabled ? [{ ...this.props }] : [];
  }

  stop(): void {}
}

export class MirrorHeartbeatTask extends SourceTask {
  private c: MirrorConfig | null = null;
  private readonly sleeper = new InterruptibleSleep();
  private nextMs = 0;

  version(): string {
    return BROOK_CONNECT_VERSION;
  }

  start(props: TaskConfig): void {
    this.c = new MirrorConfig(props);
  }

  async poll(): Promise<SourceRecord[] | null> {
    const c = this.c!;
    const now = Date.now();
    if (now < this.nextMs) {
      await this.sleeper.sleep(Math.min(1000, this.nextMs - now));
      return null;
    }
    this.nextMs = now + c.intervalMs('emit.heartbeats');
    const hb = { sourceClusterAlias: c.sourceAlias, targetClusterAlias: c.targetAlias, timestamp: now };
    return [
      new SourceRecord({
        sourcePartition: { sourceClusterAlias: c.sourceAlias, targetClusterAlias: c.targetAlias },
        sourceOffset: { offset: 0 },
        topic: c.policy.heartbeatsTopic(),
        kafkaPartition: 0,
        keySchema: Schemas.BYTES,
        key: encodeHeartbeatKey(hb),
        valueSchema: Schemas.BYTES,
        value: encodeHeartbeatValue(hb),
        timestamp: now,
      }),
    ];
  }

  stop(): void {
    this.sleeper.stop();
  }
}
