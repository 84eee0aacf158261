// MirrorMaker 2 in dedicated mode (Kafka's MirrorMaker driver behind connect-mirror-maker.sh): for every
// enabled flow A->B one Connect worker on cluster B runs MirrorSourceConnector, MirrorCheckpointConnector and
// MirrorHeartbeatConnector with the flow's config. Source offsets (the mirror's position) live in
// `mm2-offsets.A.internal` on B, so a restarted process, kill -9 included, resumes where the acknowledged
// records end; the connector configs go to `mm2-configs.A.internal` and statuses to `mm2-status.A.internal`
// in Kafka Connect's record layouts. Lifecycle: start() brings every flow up (or fails, stopping what started);
// stop() stops the herders (tasks commit their offsets), then the workers and stores.

import { Admin, Producer } from '../../client/index.js';
import { builtinPlugins } from '../runtime/builtin-plugins.js';
import { KafkaBasedLog } from '../runtime/distributed/kafka-based-log.js';
import { TopicOffsetStore } from '../runtime/distributed/topic-offset-store.js';
import { StandaloneHerder } from '../runtime/standalone-herder.js';
import { Worker } from '../runtime/worker.js';
import { loadWorkerConfig } from '../runtime/worker-config.js';
import { MirrorConfig } from './mirror-config.js';
import { type Flow, parseMirrorMakerConfig } from './mm2-config.js';
import { ensureInternalTopic } from './source-connector.js';

export const MIRROR_CONNECTORS = [
  'org.apache.kafka.connect.mirror.MirrorSourceConnector',
  'org.apache.kafka.connect.mirror.MirrorCheckpointConnector',
  'org.apache.kafka.connect.mirror.MirrorHeartbeatConnector',
] as const;

const STATUS_WRITE_INTERVAL_MS = 5000;
/** Kafka's offset.storage.partitions default. */
const OFFSET_TOPIC_PARTITIONS = 25;

/**
 * The flow's source offsets in `mm2-offsets.<source>.internal` on the target: Connect distributed's store (a
 * KafkaBasedLog read to its end at start, then followed), with the target cluster's client settings.
 */
export function flowOffsetStore(flow: Flow, clientId: string, log: (line: string) => void): TopicOffsetStore {
  const c = new MirrorConfig(flow.connectorProps);
  const { bootstrapServers, clientId: _id, ...security } = c.clientOptions('target', clientId);
  const rf = Number(flow.connectorProps['offset.storage.replication.factor'] ?? 3);
  return new TopicOffsetStore(
    (onRecord) =>
      new KafkaBasedLog({
        topic: flow.workerProps['offset.storage.topic']!,
        bootstrapServers: Array.isArray(bootstrapServers) ? bootstrapServers.join(',') : bootstrapServers,
        clientId,
        partitions: OFFSET_TOPIC_PARTITIONS,
        replicationFactor: rf,
        onRecord,
        log,
        clientOptions: security,
      }),
  );
}

export interface RunningFlow {
  readonly flow: Flow;
  readonly herder: StandaloneHerder;
  readonly offsets: TopicOffsetStore;
}

function simpleName(className: string): string {
  return className.slice(className.lastIndexOf('.') + 1);
}

export class MirrorMaker {
  private readonly running: RunningFlow[] = [];
  private readonly workers: Worker[] = [];
  private readonly statusProducers: Producer[] = [];
  private statusTimer: NodeJS.Timeout | null = null;
  private readonly lastStatus = new Map<string, string>();

  private constructor(private readonly log: (line: string) => void) {}

  get flows(): readonly RunningFlow[] {
    return this.running;
  }

  /** Starts every enabled flow whose target is in `targets` (all when null), as `--clusters` selects. */
  static async start(
    props: Record<string, string>,
    log: (line: string) => void,
    targets: string[] | null = null,
  ): Promise<MirrorMaker> {
    const config = parseMirrorMakerConfig(props);
    const flows = config.flows.filter((f) => targets === null || targets.includes(f.target));
    if (flows.length === 0) log('No enabled replication flows (set A->B.enabled = true)');
    const mm = new MirrorMaker(log);
    try {
      for (const f of flows) await mm.startFlow(f);
    } catch (err) {
      await mm.stop();
      throw err;
    }
    mm.scheduleStatus();
    return mm;
  }

  private async startFlow(flow: Flow): Promise<void> {
    const name = `${flow.source}->${flow.target}`;
    const c = new MirrorConfig(flow.connectorProps);
    const targetClient = c.clientOptions('target', `${name}|mm2`);
    const rf = Number(flow.connectorProps['offset.storage.replication.factor'] ?? 3);
    const offsets = flowOffsetStore(flow, `${name}|mm2-offsets`, this.log);
    await offsets.start();
    const { bootstrapServers: _b, clientId: _c, ...security } = targetClient;
    const worker = new Worker({
      workerId: `mm2-${name}`,
      config: loadWorkerConfig(flow.workerProps, 'distributed'),
      plugins: builtinPlugins(),
      offsets,
      log: this.log,
      clientOptions: security,
    });
    this.workers.push(worker);
    const herder = new StandaloneHerder(worker);
    this.running.push({ flow, herder, offsets });
    const producer = new Producer({ ...targetClient, acks: 'all' });
    this.statusProducers.push(producer);
    const admin = new Admin(targetClient);
    try {
      for (const key of ['config.storage.topic', 'status.storage.topic'])
        await ensureInternalTopic(admin, flow.workerProps[key]!, rf, this.log);
    } finally {
      await admin.close();
    }
    for (const className of MIRROR_CONNECTORS) {
      const connector = simpleName(className);
      const config = { ...flow.connectorProps, name: connector, 'connector.class': className };
      // Kafka Connect's config record: key connector-<name>, value {"properties": {...}}.
      await producer.send({
        topic: flow.workerProps['config.storage.topic']!,
        key: Buffer.from(`connector-${connector}`),
        value: Buffer.from(JSON.stringify({ properties: config })),
      });
      await herder.putConnectorConfig(connector, config, true);
    }
    this.log(`Started flow ${name}`);
  }

  private scheduleStatus(): void {
    this.statusTimer = setTimeout(() => {
      this.writeStatuses()
        .catch((err) => this.log(`Writing statuses failed: ${(err as Error).message}`))
        .finally(() => {
          if (this.statusTimer !== null) this.scheduleStatus();
        });
    }, STATUS_WRITE_INTERVAL_MS);
  }

  /** Writes changed connector and task statuses in Kafka Connect's status record layout. */
  private async writeStatuses(): Promise<void> {
    for (const [i, r] of this.running.entries()) {
      const topic = r.flow.workerProps['status.storage.topic']!;
      for (const connector of r.herder.connectors()) {
        const s = r.herder.connectorStatus(connector);
        const records: { key: string; value: string }[] = [
          { key: `status-connector-${connector}`, value: statusJson(s.connector) },
          ...s.tasks.map((t) => ({ key: `status-task-${connector}-${t.id}`, value: statusJson(t) })),
        ];
        for (const rec of records) {
          if (this.lastStatus.get(`${i}/${rec.key}`) === rec.value) continue;
          await this.statusProducers[i]!.send({
            topic,
            key: Buffer.from(rec.key),
            value: Buffer.from(rec.value),
          });
          this.lastStatus.set(`${i}/${rec.key}`, rec.value);
        }
      }
    }
  }

  async stop(): Promise<void> {
    if (this.statusTimer !== null) clearTimeout(this.statusTimer);
    this.statusTimer = null;
    for (const r of this.running)
      await r.herder.stop().catch((err) => this.log(`Stopping: ${(err as Error).message}`));
    for (const w of this.workers) await w.close().catch(() => {});
    for (const r of this.running) await r.offsets.stop().catch(() => {});
    for (const p of this.statusProducers) await p.close().catch(() => {});
  }
}

function statusJson(s: { state: string; trace?: string | null; worker_id: string }): string {
  return JSON.stringify({ state: s.state, trace: s.trace ?? null, worker_id: s.worker_id, generation: 0 });
}
