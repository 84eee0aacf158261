// FileStreamSinkConnector, Kafka's example sink connector with its configs: `file` (standard output when
// unset) and `topics`/`topics.regex`. Each record's value is appended as one line (its text: a string as is,
// a struct as Struct{...}, null as "null"); flush() syncs the file, so committed offsets never run ahead of
// what is on disk.

import { type FileHandle, open } from 'node:fs/promises';
import { ConfigDef } from '../api/config-def.js';
import { SinkConnector, SinkTask, type TaskConfig } from '../api/connector.js';
import type { SinkRecord } from '../api/records.js';
import { BROOK_CONNECT_VERSION } from '../version.js';

function configDef(): ConfigDef {
  return new ConfigDef().define({
    name: 'file',
    type: 'STRING',
    defaultValue: null,
    importance: 'HIGH',
    documentation: 'Destination filename. If not specified, the standard output will be used',
  });
}

export class FileStreamSinkConnector extends SinkConnector {
  static readonly className = 'org.apache.kafka.connect.file.FileStreamSinkConnector';
  private props: Record<string, string> = {};

  version(): string {
    return BROOK_CONNECT_VERSION;
  }
  start(props: Record<string, string>): void {
    this.props = props;
  }
  taskClass() {
    return FileStreamSinkTask;
  }
  taskConfigs(maxTasks: number): TaskConfig[] {
    const c: TaskConfig = {};
    if (this.props.file !== undefined) c.file = this.props.file;
    return Array.from({ length: maxTasks }, () => ({ ...c }));
  }
  stop(): void {}
  config(): ConfigDef {
    return configDef();
  }
  /** KIP-875, as Kafka's: the consumer group's offsets are all there is, so any are taken as they are. */
  override alterOffsets(): boolean {
    return true;
  }
}

export class FileStreamSinkTask extends SinkTask {
  private handle: FileHandle | null = null;
  private toStdout = false;

  version(): string {
    return BROOK_CONNECT_VERSION;
  }

  async start(props: TaskConfig): Promise<void> {
    const file = configDef().parse(props).file as string | null;
    if (file === null) this.toStdout = true;
    else this.handle = await open(file, 'a');
  }

  async put(records: SinkRecord[]): Promise<void> {
    if (records.length === 0) return;
    const text = records.map((r) => `${lineOf(r.value)}\n`).join('');
    if (this.toStdout) process.stdout.write(text);
    else await this.handle!.appendFile(text);
  }

  override async flush(): Promise<void> {
    await this.handle?.sync();
  }

  async stop(): Promise<void> {
    await this.handle?.close();
    this.handle = null;
  }
}

function lineOf(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'object' && !(value instanceof Date) && value.constructor === Object)
    return JSON.stringify(value);
  return String(value);
}
