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
//
// Only the leader writes, except through the leader's own REST calls; every worker reads the whole topic at
// start and follows it, and the herder is told what changed. Task configs are buffered per connector until
// their commit record, so a reader never sees half of an update. `offset` is the offset after the last record
// read: the config offset workers compare in the group protocol.

import type { ConsumerRecord } from '../../../client/index.js';
import type { TaskConfig } from '../../api/connector.js';
import type { RestartRequest } from '../herder.js';
import type { TargetState } from '../status.js';
import type { KafkaBasedLog, LogOpener } from './kafka-based-log.js';
import type { SessionKey } from './request-signature.js';

export type ConfigEvent =
  | { kind: 'connector'; name: string; removed: boolean }
  | { kind: 'tasks'; name: string }
  | { kind: 'target-state'; name: string }
  | { kind: 'restart'; name: string; request: RestartRequest };

export class ConfigStore {
  readonly connectors = new Map<string, Record<string, string>>();
  readonly targetStates = new Map<string, TargetState>();
  /** Committed task configs per connector. */
  readonly taskConfigs = new Map<string, TaskConfig[]>();
  private readonly deferred = new Map<string, Map<number, TaskConfig>>();
  /** KIP-618: the task count of the last fenced generation, per connector (its `tasks-fencing-` record). */
  readonly taskCountRecords = new Map<string, number>();
  /** Connectors whose task configs were committed after their last task count record. */
  readonly pendingFencing = new Set<string>();
  /** The session key the leader wrote last (request-signature.ts). */
  sessionKey: SessionKey | null = null;
  offset = 0;
  private readonly log: KafkaBasedLog;

  constructor(
    open: LogOpener,
    private readonly onEvent: (e: ConfigEvent) => void,
  ) {
    this.log = open((r) => this.apply(r));
  }

  start(): Promise<void> {
    return this.log.start();
  }

  stop(): Promise<void> {
    return this.log.stop();
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
    // A new connector's target state goes first, so that it never starts in the wrong state.
    if (state !== undefined) await this.putTargetState(name, state);
    await this.log.send(`connector-${name}`, json({ properties: config }));
    await this.log.readToEnd();
  }

  async removeConnector(name: string): Promise<void> {
    await this.log.send(`connector-${name}`, null);
    await this.log.send(`target-state-${name}`, null);
    await this.log.readToEnd();
  }

  async putTaskConfigs(name: string, configs: TaskConfig[]): Promise<void> {
    await this.log.readToEnd();
    for (let t = 0; t < configs.length; t++)
      await this.log.send(`task-${name}-${t}`, json({ properties: configs[t] }));
    await this.log.send(`commit-${name}`, json({ tasks: configs.length }));
    await this.log.readToEnd();
  }

  async putTargetState(name: string, state: TargetState): Promise<void> {
    await this.log.send(
      `target-state-${name}`,
      json({ state: state === 'STOPPED' ? 'PAUSED' : state, 'state.v2': state }),
    );
    await this.log.readToEnd();
  }

  async putSessionKey(key: SessionKey): Promise<void> {
    await this.log.send(
      'session-key',
      json({
        key: key.key.toString('base64'),
        algorithm: key.algorithm,
        'creation-timestamp': key.creationTimestamp,
      }),
    );
    await this.log.readToEnd();
  }

  /** Records that the zombies of every task generation before `count` tasks are fenced (KIP-618). */
  async putTaskCountRecord(name: string, count: number): Promise<void> {
    await this.log.send(`tasks-fencing-${name}`, json({ 'task-count': count }));
    await this.log.readToEnd();
  }

  async putRestartRequest(name: string, request: RestartRequest): Promise<void> {
    await this.log.send(
      `restart-connector-${name}`,
      json({ 'include-tasks': request.includeTasks, 'only-failed': request.onlyFailed }),
    );
    await this.log.readToEnd();
  }
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
