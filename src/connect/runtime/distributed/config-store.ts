// Connector configs, task configs, target states and restart requests in config.storage.topic (Kafka's
// KafkaConfigBackingStore): one partition, compacted, string keys, values as JsonConverter writes them without
// schemas, so Kafka's own tooling reads them:
//
//   connector-<name>          {"properties": {...}}            (a tombstone deletes the connector)
//   task-<name>-<n>           {"properties": {...}}            (applied only by the commit that follows)
//   commit-<name>             {"tasks": N}                     (tasks 0..N-1 written before it become current)
//   target-state-<name>       {"state": "PAUSED", "state.v2": "STOPPED"}   (state is PAUSED for STOPPED, for
//                                                                           workers that predate KIP-875)
//   restart-connector-<name>  {"include-tasks": true, "only-failed": false}   (KIP-745)
//   session-key               {"key": <base64>, "algorithm": "HmacSHA256", "creation-timestamp": <ms>}
//                                                              (the key internal requests are signed with)
//   tasks-fencing-<name>      {"task-count": N}                (KIP-618: the task generation whose zombies are
//                                                               fenced; a commit after it leaves fencing pending)
//   logger-cluster-<namespace> {"level": "DEBUG"}              (KIP-976: a level for every worker; any worker
//                                                               writes it, workers apply the ones written after
//                                                               they started)
//
// Only the leader writes, except through the leader's own REST calls; every worker reads the whole topic at
// start and follows it, and the herder is told what changed. Task configs are buffered per connector until
// their commit record, so a reader never sees half of an update. `offset` is the offset after the last record
// read: the config offset workers compare in the group protocol.
//
// KIP-618: with exactly.once.source.support preparing or enabled, the leader's writes (connector and task
// configs, commits, task count records, session keys, restart requests; target states stay plain writes, as in
// Kafka) go through a transactional producer, transactional.id `connect-cluster-<group.id>`, claimed when the
// worker becomes leader. Claiming fences the previous leader's producer, so a zombie leader (one that has not
// noticed that the group moved on) can no longer write configs: its transaction fails with PRODUCER_FENCED and
// read_committed readers never see it. `generations` counts the commit records applied per connector (Kafka's
// task config generation): a task started for one generation must not start once a later one is read.

import type { ConsumerRecord } from '../../../client/index.js';
import type { TaskConfig } from '../../api/connector.js';
import { ConnectException } from '../../errors.js';
import type { RestartRequest } from '../herder.js';
import type { TargetState } from '../status.js';
import type { KafkaBasedLog, LogOpener } from './kafka-based-log.js';
import type { SessionKey } from './request-signature.js';

export type ConfigEvent =
  | { kind: 'connector'; name: string; removed: boolean }
  | { kind: 'tasks'; name: string }
  | { kind: 'target-state'; name: string }
  | { kind: 'restart'; name: string; request: RestartRequest }
  | { kind: 'logger-level'; namespace: string; level: string };

/** The leader's transactional id for the config topic (Kafka's DistributedConfig.transactionalProducerId). */
export function leaderTransactionalId(groupId: string): string {
  return `connect-cluster-${groupId}`;
}

/** A privileged (transactional) write to the config topic failed: this worker may no longer lead (Kafka's name). */
export class PrivilegedWriteException extends ConnectException {
  override name = 'PrivilegedWriteException';
}

export interface ConfigWriterFencing {
  /** The transactional id claimed by the leader. */
  transactionalId: string;
  /** Called after a privileged write failed (privileges are then lost until claimed again). */
  onFenced: (err: unknown) => void;
}

export class ConfigStore {
  readonly connectors = new Map<string, Record<string, string>>();
  readonly targetStates = new Map<string, TargetState>();
  /** Committed task configs per connector. */
  readonly taskConfigs = new Map<string, TaskConfig[]>();
  private readonly deferred = new Map<string, Map<number, TaskConfig>>();
  /** KIP-618: the task count of the last fenced generation, per connector (its `tasks-fencing-` record). */
  readonly taskCountRecords = new Map<string, number>();
  /** KIP-618: the number of task config commits applied per connector (Kafka's task config generation). */
  readonly generations = new Map<string, number>();
  /** Connectors whose task configs were committed after their last task count record. */
  readonly pendingFencing = new Set<string>();
  /** The session key the leader wrote last (request-signature.ts). */
  sessionKey: SessionKey | null = null;
  offset = 0;
  private readonly log: KafkaBasedLog;

  constructor(
    open: LogOpener,
    private readonly onEvent: (e: ConfigEvent) => void,
    /** Set when the leader must write through a fencable transactional producer (KIP-618). */
    private readonly fencing: ConfigWriterFencing | null = null,
  ) {
    this.log = open((r) => this.apply(r));
  }

  /** Whether the leader's writes need write privileges (exactly.once.source.support preparing or enabled). */
  usesFencableWriter(): boolean {
    return this.fencing !== null;
  }

  hasWritePrivileges(): boolean {
    return this.fencing === null || this.log.hasWritePrivileges();
  }

  /** Called when this worker becomes leader: fences any previous leader's writer. */
  async claimWritePrivileges(): Promise<void> {
    if (this.fencing === null || this.log.hasWritePrivileges()) return;
    await this.log.claimWritePrivileges(this.fencing.transactionalId);
  }

  async relinquishWritePrivileges(): Promise<void> {
    await this.log.relinquishWritePrivileges();
  }

  taskGeneration(name: string): number {
    return this.generations.get(name) ?? 0;
  }

  /** Writes records as the leader: one transaction when fencing is on, else plain sends in order. */
  private async sendPrivileged(records: Array<{ key: string; value: Buffer | null }>): Promise<void> {
    if (this.fencing === null) {
      for (const r of records) await this.log.send(r.key, r.value);
      return;
    }
    try {
      await this.log.sendTransactional(records);
    } catch (err) {
      this.fencing.onFenced(err);
      throw new PrivilegedWriteException(
        `Failed to perform fencable send to config topic: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }

  start(): Promise<void> {
    return this.log.start();
  }

  /** `closeTimeoutMs` bounds the close of the log's clients (KafkaBasedLog.stop). */
  stop(closeTimeoutMs?: number): Promise<void> {
    return this.log.stop(closeTimeoutMs);
  }

  readToEnd(): Promise<void> {
    return this.log.readToEnd();
  }

  targetState(name: string): TargetState {
    return this.targetStates.get(name) ?? 'STARTED';
  }

  taskCount(name: string): number {
    return this.taskConfigs.get(name)?.length ?? 0;
  }

  private apply(r: ConsumerRecord): void {
    this.offset = r.offset + 1;
    const key = r.key?.toString('utf8') ?? '';
    const value = r.value === null ? null : (JSON.parse(r.value.toString('utf8')) as Record<string, unknown>);
    if (key.startsWith('connector-')) {
      const name = key.slice('connector-'.length);
      if (value === null) {
        this.connectors.delete(name);
        this.targetStates.delete(name);
        this.taskConfigs.delete(name);
        this.deferred.delete(name);
        this.taskCountRecords.delete(name);
        this.pendingFencing.delete(name);
        this.generations.delete(name);
        this.onEvent({ kind: 'connector', name, removed: true });
      } else {
        this.connectors.set(name, stringMap(value.properties));
        this.onEvent({ kind: 'connector', name, removed: false });
      }
    } else if (key.startsWith('task-')) {
      const rest = key.slice('task-'.length);
      const dash = rest.lastIndexOf('-');
      const name = rest.slice(0, dash);
      const task = Number(rest.slice(dash + 1));
      if (value === null || dash < 0 || !Number.isInteger(task)) return;
      let pending = this.deferred.get(name);
      if (pending === undefined) this.deferred.set(name, (pending = new Map()));
      pending.set(task, stringMap(value.properties));
    } else if (key.startsWith('commit-')) {
      const name = key.slice('commit-'.length);
      if (value === null) return;
      const count = Number(value.tasks);
      const pending = this.deferred.get(name) ?? new Map<number, TaskConfig>();
      const previous = this.taskConfigs.get(name) ?? [];
      const next: TaskConfig[] = [];
      for (let t = 0; t < count; t++) {
        const c = pending.get(t) ?? previous[t];
        // A commit whose task records were compacted away and not rewritten: Kafka marks the connector
        // inconsistent; Brook keeps the previous configs until the connector's owner writes them again.
        if (c === undefined) return;
        next.push(c);
      }
      this.deferred.delete(name);
      this.taskConfigs.set(name, next);
      this.generations.set(name, this.taskGeneration(name) + 1);
      this.pendingFencing.add(name);
      this.onEvent({ kind: 'tasks', name });
    } else if (key.startsWith('target-state-')) {
      const name = key.slice('target-state-'.length);
      if (value === null) {
        this.targetStates.delete(name);
        return;
      }
      const state = String(value['state.v2'] ?? value.state ?? 'STARTED');
      this.targetStates.set(name, state === 'PAUSED' || state === 'STOPPED' ? state : 'STARTED');
      this.onEvent({ kind: 'target-state', name });
    } else if (key === 'session-key') {
      if (value === null) return;
      this.sessionKey = {
        key: Buffer.from(String(value.key), 'base64'),
        algorithm: String(value.algorithm),
        creationTimestamp: Number(value['creation-timestamp']),
      };
    } else if (key.startsWith('tasks-fencing-')) {
      const name = key.slice('tasks-fencing-'.length);
      if (value === null) {
        this.taskCountRecords.delete(name);
        return;
      }
      this.taskCountRecords.set(name, Number(value['task-count']));
      this.pendingFencing.delete(name);
    } else if (key.startsWith('logger-cluster-')) {
      if (value === null || typeof value.level !== 'string') return;
      this.onEvent({
        kind: 'logger-level',
        namespace: key.slice('logger-cluster-'.length),
        level: value.level,
      });
    } else if (key.startsWith('restart-connector-')) {
      if (value === null) return;
      const name = key.slice('restart-connector-'.length);
      this.onEvent({
        kind: 'restart',
        name,
        request: { includeTasks: value['include-tasks'] === true, onlyFailed: value['only-failed'] === true },
      });
    }
  }

  // ---- writes (the leader's) ----------------------------------------------------------------------------------

  async putConnectorConfig(name: string, config: Record<string, string>, state?: TargetState): Promise<void> {
    // A new connector's target state goes first (in the same transaction when fencing is on), so that it never
    // starts in the wrong state.
    const records =
      state === undefined ? [] : [{ key: `target-state-${name}`, value: targetStateValue(state) }];
    records.push({ key: `connector-${name}`, value: json({ properties: config }) });
    await this.sendPrivileged(records);
    await this.log.readToEnd();
  }

  async removeConnector(name: string): Promise<void> {
    await this.sendPrivileged([
      { key: `connector-${name}`, value: null },
      { key: `target-state-${name}`, value: null },
    ]);
    await this.log.readToEnd();
  }

  async putTaskConfigs(name: string, configs: TaskConfig[]): Promise<void> {
    await this.log.readToEnd();
    if (configs.length > 0)
      await this.sendPrivileged(
        configs.map((c, t) => ({ key: `task-${name}-${t}`, value: json({ properties: c }) })),
      );
    await this.sendPrivileged([{ key: `commit-${name}`, value: json({ tasks: configs.length }) }]);
    await this.log.readToEnd();
  }

  async putTargetState(name: string, state: TargetState): Promise<void> {
    await this.log.send(`target-state-${name}`, targetStateValue(state));
    await this.log.readToEnd();
  }

  async putSessionKey(key: SessionKey): Promise<void> {
    await this.sendPrivileged([
      {
        key: 'session-key',
        value: json({
          key: key.key.toString('base64'),
          algorithm: key.algorithm,
          'creation-timestamp': key.creationTimestamp,
        }),
      },
    ]);
    await this.log.readToEnd();
  }

  /** Records that the zombies of every task generation before `count` tasks are fenced (KIP-618). */
  async putTaskCountRecord(name: string, count: number): Promise<void> {
    await this.sendPrivileged([{ key: `tasks-fencing-${name}`, value: json({ 'task-count': count }) }]);
    await this.log.readToEnd();
  }

  /** KIP-976: a logger level for every worker; any worker writes it (not a privileged write, as in Kafka). */
  async putLoggerLevel(namespace: string, level: string): Promise<void> {
    await this.log.send(`logger-cluster-${namespace}`, json({ level }));
  }

  async putRestartRequest(name: string, request: RestartRequest): Promise<void> {
    await this.sendPrivileged([
      {
        key: `restart-connector-${name}`,
        value: json({ 'include-tasks': request.includeTasks, 'only-failed': request.onlyFailed }),
      },
    ]);
    await this.log.readToEnd();
  }
}

/** `state` is PAUSED for STOPPED, for workers that predate KIP-875. */
function targetStateValue(state: TargetState): Buffer {
  return json({ state: state === 'STOPPED' ? 'PAUSED' : state, 'state.v2': state });
}

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (v === null || typeof v !== 'object') return out;
  for (const [k, x] of Object.entries(v as Record<string, unknown>))
    if (x !== null && x !== undefined) out[k] = String(x);
  return out;
}
