// MirrorMaker 2 in dedicated mode (Kafka's MirrorMaker driver behind connect-mirror-maker.sh): for every
// enabled flow A->B a distributed Connect worker on cluster B (group `A-mm2`, Kafka's workerConfig) runs
// MirrorSourceConnector, MirrorCheckpointConnector and MirrorHeartbeatConnector with the flow's config; a pair
// that is not enabled runs the same way while it emits heartbeats, its other two connectors idle (enabled=false),
// as Kafka's MirrorMaker runs every such pair. Several
// processes started on the same file join the same groups and share the connectors and tasks through the Connect
// group protocol (KIP-710); when one dies, the others take its work after scheduled.rebalance.max.delay.ms.
// With `dedicated.mode.enable.internal.rest=true` each process serves the internal REST endpoints (mirror-rest.ts)
// so that followers can hand task configs to the flow's leader and ask it to fence zombies; without it, as in
// Kafka, only the leader's own connectors can publish task configs. `<target>.exactly.once.source.support=enabled`
// turns on KIP-618 for the flows into that target: records and their source offsets are written in one
// transaction. Source offsets live in `mm2-offsets.A.internal` on B, configs in `mm2-configs.A.internal`,
// statuses in `mm2-status.A.internal`, in Kafka Connect's layouts.

import { hostname } from 'node:os';
import type { Logger, LogSink } from '../../common/logger.js';
import { ConfigException, RequestTargetError, RestError } from '../errors.js';
import { builtinPlugins } from '../runtime/builtin-plugins.js';
import { DistributedHerder } from '../runtime/distributed/distributed-herder.js';
import { internalTopicLogs, KafkaBasedLog } from '../runtime/distributed/kafka-based-log.js';
import { TopicOffsetStore } from '../runtime/distributed/topic-offset-store.js';
import { CONNECT_LOGGERS, Loggers } from '../runtime/loggers.js';
import { Worker } from '../runtime/worker.js';
import { loadWorkerConfig, type WorkerConfig } from '../runtime/worker-config.js';
import { MirrorConfig } from './mirror-config.js';
import { MirrorRestServer } from './mirror-rest.js';
import { type Flow, parseMirrorMakerConfig } from './mm2-config.js';

export const MIRROR_CONNECTORS = [
  'org.apache.kafka.connect.mirror.MirrorSourceConnector',
  'org.apache.kafka.connect.mirror.MirrorCheckpointConnector',
  'org.apache.kafka.connect.mirror.MirrorHeartbeatConnector',
] as const;

/** How often a flow's leader checks that the connector configs in its config topic are the file's. */
const CONFIGURE_INTERVAL_MS = 2000;
/** Kafka's offset.storage.partitions default. */
const OFFSET_TOPIC_PARTITIONS = 25;

/**
 * The flow's source offsets in `mm2-offsets.<source>.internal` on the target: Connect distributed's store (a
 * KafkaBasedLog read to its end at start, then followed), with the target cluster's client settings.
 */
export function flowOffsetStore(flow: Flow, clientId: string, log: Logger): TopicOffsetStore {
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
  readonly herder: DistributedHerder;
  readonly worker: Worker;
}

function simpleName(className: string): string {
  return className.slice(className.lastIndexOf('.') + 1);
}

/** Kafka's `dedicated.mode.enable.internal.rest` (default false). */
export function internalRestEnabled(props: Readonly<Record<string, string>>): boolean {
  const v = (props['dedicated.mode.enable.internal.rest'] ?? 'false').trim().toLowerCase();
  if (v !== 'true' && v !== 'false')
    throw ConfigException.invalid(
      'dedicated.mode.enable.internal.rest',
      v,
      'Expected value to be either true or false',
    );
  return v === 'true';
}

export class MirrorMaker {
  private readonly running: RunningFlow[] = [];
  private rest: MirrorRestServer | null = null;
  private configureTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** The last refusal logged per flow and connector, so that a refused config is logged once, not every round. */
  private readonly refused = new Map<string, string>();
  /** This process's REST base URL (KIP-710), or a unique placeholder nobody can reach when REST is off. */
  private baseUrl = '';
  private workerIdBase = '';
  private readonly log: Logger;
  private reportFailure: (err: Error) => void = () => {};
  /**
   * Settles with the error of the first flow herder that failed after the start (its group refused, say). Kafka's
   * herder exits the process then (Exit.exit(1)), so `brook mirror-maker` stops and exits 1.
   */
  readonly failed: Promise<Error> = new Promise((resolve) => {
    this.reportFailure = resolve;
  });

  private constructor(
    /** The file's keys: its top level holds the internal REST server's TLS keys, as Kafka reads them. */
    private readonly props: Readonly<Record<string, string>>,
    /** The process's loggers, shared by every flow's worker, as one log4j serves Kafka's MirrorMaker. */
    readonly loggers: Loggers,
  ) {
    this.log = loggers.logger(CONNECT_LOGGERS.mirrorMaker);
  }

  get flows(): readonly RunningFlow[] {
    return this.running;
  }

  /**
   * Starts every flow (enabled, or emitting heartbeats) whose target is in `targets` (all when null), as
   * `--clusters` selects.
   */
  static async start(
    props: Record<string, string>,
    /** Where the process's formatted log lines go. */
    sink: LogSink,
    targets: string[] | null = null,
  ): Promise<MirrorMaker> {
    const config = parseMirrorMakerConfig(props);
    const rest = internalRestEnabled(props);
    const flows = config.flows.filter((f) => targets === null || targets.includes(f.target));
    const mm = new MirrorMaker(props, new Loggers(sink));
    if (!flows.some((f) => f.replicates))
      mm.log.warn('No enabled replication flows (set A->B.enabled = true)');
    try {
      await mm.startRest(rest, flows[0]);
      for (const f of flows) {
        if (f.replicates) await mm.startFlow(f);
        else await mm.startFlow(f).catch((err) => mm.dropHeartbeatsFlow(f, err));
      }
    } catch (err) {
      await mm.stop();
      throw err;
    }
    for (const r of mm.running) r.herder.failed.then((err) => mm.herderFailed(r, err));
    mm.scheduleConfigure();
    return mm;
  }

  /**
   * The internal REST server (KIP-710): Connect's listener keys, read from the file's top level; for
   * `listeners=https://...` its TLS keys too (`listeners.https.ssl.*`, else `ssl.*`), which also secure this
   * process's requests to the other processes' servers.
   */
  private async startRest(enabled: boolean, flow: Flow | undefined): Promise<void> {
    const unique = `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    if (!enabled || flow === undefined) {
      // Kafka's dedicated mode without REST: no worker can be reached, which is what this URL says.
      this.baseUrl = `http://${unique}.invalid:1/`;
      this.workerIdBase = unique;
      return;
    }
    const c: WorkerConfig = loadWorkerConfig(flow.workerProps, 'distributed', this.props);
    const rest = new MirrorRestServer(this.loggers.logger(CONNECT_LOGGERS.restServer));
    const bound = await rest.start(
      c.restHost,
      c.restPort,
      c.restTls?.server ?? null,
      c.restTls?.client ?? null,
    );
    this.rest = rest;
    const p = c.parsed;
    const host =
      (p['rest.advertised.host.name'] as string | null) ??
      (c.restHost === '' || c.restHost === '0.0.0.0' ? hostname() : c.restHost);
    const port = (p['rest.advertised.port'] as number | null) ?? bound.port;
    const h = host.includes(':') ? `[${host}]` : host;
    this.baseUrl = `${c.restTls === null ? 'http' : 'https'}://${h}:${port}/`;
    this.workerIdBase = `${host}:${port}`;
    this.log.info(`Internal REST server listening at ${this.baseUrl}`);
  }

  private async startFlow(flow: Flow): Promise<void> {
    const name = `${flow.source}->${flow.target}`;
    const c = new MirrorConfig(flow.connectorProps);
    const { bootstrapServers: _b, clientId: _c, ...security } = c.clientOptions('target', `${name}|mm2`);
    const config = loadWorkerConfig(flow.workerProps, 'distributed', this.props);
    const logs = internalTopicLogs(config, this.loggers, security);
    const offsets = new TopicOffsetStore(logs.offsets());
    const worker = new Worker({
      workerId: `${this.workerIdBase}/${name}`,
      config,
      plugins: builtinPlugins(),
      offsets,
      loggers: this.loggers,
      clientOptions: security,
      openOffsetsTopic(topic, clients) {
        return new TopicOffsetStore(logs.offsets(topic, clients));
      },
    });
    // Kafka's flow prefix: the leader's URL with it is where followers send the flow's internal requests.
    const url = new URL(
      `${encodeURIComponent(flow.source)}/${encodeURIComponent(flow.target)}/`,
      this.baseUrl,
    ).toString();
    const herder = new DistributedHerder({ worker, offsets, logs, url });
    this.rest?.addFlow(flow.source, flow.target, herder);
    this.running.push({ flow, herder, worker });
    await herder.start();
    await this.configureFlow(this.running[this.running.length - 1]!);
    this.log.info(`Started flow ${name}`);
  }

  private herderFailed(r: RunningFlow, err: Error): void {
    if (this.stopped || !this.running.includes(r)) return;
    this.log.error(`Flow ${r.flow.source}->${r.flow.target} failed: ${err.message}`);
    this.reportFailure(err);
  }

  /**
   * A pair run only for its heartbeats that could not start (say the source cluster refuses this account its
   * internal topics, as a read-only migration account would): logged and left out, so that it costs the
   * heartbeats and not the mirror, as in Kafka, where each pair's herder fails on its own.
   */
  private async dropHeartbeatsFlow(flow: Flow, err: unknown): Promise<void> {
    const at = this.running.findIndex((r) => r.flow === flow);
    const r = at < 0 ? null : this.running.splice(at, 1)[0]!;
    this.rest?.removeFlow(flow.source, flow.target);
    await r?.herder.stop().catch(() => {});
    await r?.worker.close().catch(() => {});
    this.log.warn(
      `Not emitting ${flow.source}->${flow.target} heartbeats into ${flow.target}: ${(err as Error).message} ` +
        `(set ${flow.source}->${flow.target}.emit.heartbeats.enabled = false to leave the pair out)`,
    );
  }

  /**
   * On the flow's leader, writes the three connector configs when the config topic lacks them or holds other
   * ones (Kafka's MirrorMaker does the same on every node and ignores NotLeaderException on followers).
   */
  private async configureFlow(r: RunningFlow): Promise<void> {
    for (const className of MIRROR_CONNECTORS) {
      const connector = simpleName(className);
      const want = { ...r.flow.storedConnectorProps, name: connector, 'connector.class': className };
      let have: Record<string, string> | null = null;
      try {
        have = r.herder.connectorConfig(connector);
      } catch {
        have = null;
      }
      if (have !== null && sameConfig(have, want)) continue;
      try {
        await r.herder.putConnectorConfig(connector, want, true);
        this.log.info(`Wrote the config of ${connector} for ${r.flow.source}->${r.flow.target}`);
      } catch (err) {
        if (err instanceof RequestTargetError) return; // another process leads this flow: it writes them
        if (err instanceof RestError && err.statusCode === 409) return; // a rebalance: the next round
        if (err instanceof RestError && err.statusCode === 400) {
          // An invalid connector config (MirrorCheckpointConnector without offset syncs): the connector is not
          // run, the flow's others are, as Kafka's MirrorMaker logs the failure and goes on.
          const key = `${r.flow.source}->${r.flow.target} ${connector}`;
          if (this.refused.get(key) !== err.message)
            this.log.error(`Not running ${connector} for ${r.flow.source}->${r.flow.target}: ${err.message}`);
          this.refused.set(key, err.message);
          continue;
        }
        throw err;
      }
    }
  }

  private scheduleConfigure(): void {
    if (this.stopped) return;
    this.configureTimer = setTimeout(() => {
      (async () => {
        for (const r of this.running) await this.configureFlow(r);
      })()
        .catch((err) => this.log.error(`Configuring connectors failed: ${(err as Error).message}`))
        .finally(() => this.scheduleConfigure());
    }, CONFIGURE_INTERVAL_MS);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.configureTimer !== null) clearTimeout(this.configureTimer);
    this.configureTimer = null;
    for (const r of this.running)
      await r.herder.stop().catch((err) => this.log.error(`Stopping: ${(err as Error).message}`));
    for (const r of this.running) await r.worker.close().catch(() => {});
    await this.rest?.stop();
  }
}

function sameConfig(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}
