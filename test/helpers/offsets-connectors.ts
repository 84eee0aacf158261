// Connectors for tests of the offsets endpoints (KIP-875), loaded through plugin.path as a connector author's
// package would be. What their alterOffsets() does is set by the connector's `alter.offsets` key: `default` leaves
// Kafka's default (false: offsets managed elsewhere too), `true` answers true, `connect-error` throws a
// ConnectException, `type-error` throws another error. Each call is appended, as JSON, to the file named by
// `alter.offsets.log` when set, so a test sees what the runtime handed the connector. The tasks do nothing, but
// the source task's first `task.start.failures` starts in this process throw (a failure that a restart mends).

import { appendFileSync } from 'node:fs';
import {
  ConfigDef,
  ConnectException,
  SinkConnector,
  type SinkOffsets,
  type SinkRecord,
  SinkTask,
  SourceConnector,
  type SourceOffsets,
  type SourceRecord,
  SourceTask,
} from '../../src/connect/index.js';

function alterOffsets(config: Record<string, string>, offsets: SourceOffsets | SinkOffsets): boolean {
  const log = config['alter.offsets.log'];
  if (log !== undefined) appendFileSync(log, `${JSON.stringify(offsets)}\n`);
  switch (config['alter.offsets'] ?? 'default') {
    case 'true':
      return true;
    case 'connect-error':
      throw new ConnectException('these offsets are not for this connector');
    case 'type-error':
      throw new TypeError('the connector broke');
    default:
      return false;
  }
}

function configDef(): ConfigDef {
  return new ConfigDef()
    .define({
      name: 'alter.offsets',
      type: 'STRING',
      defaultValue: 'default',
      importance: 'LOW',
      documentation: 'What alterOffsets() does',
    })
    .define({
      name: 'task.start.failures',
      type: 'STRING',
      defaultValue: '0',
      importance: 'LOW',
      documentation: 'How many starts of the source task fail',
    })
    .define({
      name: 'alter.offsets.log',
      type: 'STRING',
      defaultValue: null,
      importance: 'LOW',
      documentation: 'A file each alterOffsets() call is appended to',
    });
}

/** Source task starts per task config's `name` in this process. */
const taskStarts = new Map<string, number>();

export class IdleSourceTask extends SourceTask {
  version(): string {
    return '1.0.0';
  }
  start(props: Record<string, string>): void {
    const started = (taskStarts.get(props.name ?? '') ?? 0) + 1;
    taskStarts.set(props.name ?? '', started);
    if (started <= Number(props['task.start.failures'] ?? '0'))
      throw new ConnectException(`start ${started} of the task fails`);
  }
  async poll(): Promise<SourceRecord[] | null> {
    await new Promise((r) => setTimeout(r, 100));
    return null;
  }
  stop(): void {}
}

export class OffsetsSourceConnector extends SourceConnector {
  static readonly className = 'com.example.OffsetsSourceConnector';
  private props: Record<string, string> = {};
  version(): string {
    return '1.0.0';
  }
  start(props: Record<string, string>): void {
    this.props = props;
  }
  taskClass() {
    return IdleSourceTask;
  }
  taskConfigs(): Record<string, string>[] {
    return [{ ...this.props }];
  }
  stop(): void {}
  config(): ConfigDef {
    return configDef();
  }
  override alterOffsets(config: Record<string, string>, offsets: SourceOffsets): boolean {
    return alterOffsets(config, offsets);
  }
}

export class IdleSinkTask extends SinkTask {
  version(): string {
    return '1.0.0';
  }
  start(): void {}
  put(_records: SinkRecord[]): void {}
  stop(): void {}
}

export class OffsetsSinkConnector extends SinkConnector {
  static readonly className = 'com.example.OffsetsSinkConnector';
  private props: Record<string, string> = {};
  version(): string {
    return '1.0.0';
  }
  start(props: Record<string, string>): void {
    this.props = props;
  }
  taskClass() {
    return IdleSinkTask;
  }
  taskConfigs(): Record<string, string>[] {
    return [{ ...this.props }];
  }
  stop(): void {}
  config(): ConfigDef {
    return configDef();
  }
  override alterOffsets(config: Record<string, string>, offsets: SinkOffsets): boolean {
    return alterOffsets(config, offsets);
  }
}
