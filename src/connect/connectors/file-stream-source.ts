// FileStreamSourceConnector, Kafka's example source connector with its configs: `file` (a path; standard input
// when unset), `topic` and `batch.size` (2000). Each line becomes a record with a string value schema and no
// key; the source partition is {"filename": file} and the offset {"position": bytes read}, so a restarted task
// resumes after the last line whose offset was committed. A line without its newline yet is left until it is
// complete. One task at most (a file has one reader).

import { type FileHandle, open } from 'node:fs/promises';
import { ConfigDef, nonEmptyString, range } from '../api/config-def.js';
import { SourceConnector, type SourceOffsets, SourceTask, type TaskConfig } from '../api/connector.js';
import { SourceRecord } from '../api/records.js';
import { Schemas } from '../data/schema.js';
import { ConnectException } from '../errors.js';
import { BROOK_CONNECT_VERSION } from '../version.js';

const READ_CHUNK_BYTES = 64 * 1024;
const IDLE_WAIT_MS = 1000;

function configDef(): ConfigDef {
  return new ConfigDef()
    .define({
      name: 'file',
      type: 'STRING',
      defaultValue: null,
      importance: 'HIGH',
      documentation: 'Source filename. If not specified, the standard input will be used',
    })
    .define({
      name: 'topic',
      type: 'STRING',
      validator: nonEmptyString,
      importance: 'HIGH',
      documentation: 'The topic to publish data to',
    })
    .define({
      name: 'batch.size',
      type: 'INT',
      defaultValue: 2000,
      validator: range(1),
      importance: 'LOW',
      documentation:
        'The maximum number of records the source task can read from the file each time it is polled',
    });
}

export class FileStreamSourceConnector extends SourceConnector {
  static readonly className = 'org.apache.kafka.connect.file.FileStreamSourceConnector';
  private props: Record<string, string> = {};

  version(): string {
    return BROOK_CONNECT_VERSION;
  }
  start(props: Record<string, string>): void {
    configDef().parse(props);
    this.props = props;
  }
  taskClass() {
    return FileStreamSourceTask;
  }
  taskConfigs(): TaskConfig[] {
    const c: TaskConfig = { topic: this.props.topic!, 'batch.size': this.props['batch.size'] ?? '2000' };
    if (this.props.file !== undefined) c.file = this.props.file;
    return [c];
  }
  stop(): void {}
  config(): ConfigDef {
    return configDef();
  }
  /** As Kafka's: a file only appended to is read exactly once; stdin cannot be read again after a failure. */
  override exactlyOnceSupport(props: Record<string, string>): 'SUPPORTED' | 'UNSUPPORTED' {
    const file = (props.file ?? '').trim();
    return file !== '' ? 'SUPPORTED' : 'UNSUPPORTED';
  }

  /**
   * KIP-875, as Kafka's: offsets are refused for stdin (nothing is tracked) and unless each non-null one has a
   * non-negative integer "position" under a partition with a "filename"; the runtime's offsets are all there is.
   */
  override alterOffsets(props: Record<string, string>, offsets: SourceOffsets): boolean {
    const file = props.file ?? '';
    if (file === '') {
      throw new ConnectException(
        "Offsets cannot be modified if the 'file' configuration is unspecified. This is because stdin is used for input and offsets are not tracked.",
      );
    }
    for (const { partition, offset } of offsets) {
      // A null offset is always allowed: stray offsets can always be cleaned up.
      if (offset === null) continue;
      if (!('position' in offset))
        throw new ConnectException("Offset objects should either be null or contain the key 'position'");
      const position = offset.position;
      if (!(typeof position === 'bigint' || (typeof position === 'number' && Number.isInteger(position)))) {
        throw new ConnectException(
          "The value for the 'position' key in the offset is expected to be a Long value",
        );
      }
      if (position < 0) {
        throw new ConnectException(
          "The value for the 'position' key in the offset should be a non-negative value",
        );
      }
      if (!('filename' in partition))
        throw new ConnectException("Partition objects should contain the key 'filename'");
    }
    return true;
  }
}

export class FileStreamSourceTask extends SourceTask {
  private file: string | null = null;
  private topic = '';
  private batchSize = 2000;
  private handle: FileHandle | null = null;
  private position = 0;
  private pending = Buffer.alloc(0);
  private stdinLines: string[] = [];
  private stopped = false;
  private wake: (() => void) | null = null;

  version(): string {
    return BROOK_CONNECT_VERSION;
  }

  async start(props: TaskConfig): Promise<void> {
    const c = configDef().parse(props);
    this.file = c.file as string | null;
    this.topic = c.topic as string;
    this.batchSize = c['batch.size'] as number;
    if (this.file === null) {
      process.stdin.setEncoding('utf8');
      let rest = '';
      process.stdin.on('data', (d: string) => {
        const parts = (rest + d).split('\n');
        rest = parts.pop()!;
        this.stdinLines.push(...parts.map((l) => l.replace(/\r$/, '')));
        this.wake?.();
      });
      return;
    }
    const stored = this.context.offsetStorageReader().offset({ filename: this.file });
    const position = stored?.position;
    if (typeof position === 'number' || typeof position === 'bigint') this.position = Number(position);
  }

  async poll(): Promise<SourceRecord[] | null> {
    const records = this.file === null ? this.fromStdin() : await this.fromFile();
    if (records.length > 0 || this.stopped) return records;
    await new Promise<void>((r) => {
      const t = setTimeout(r, IDLE_WAIT_MS);
      this.wake = () => {
        clearTimeout(t);
        r();
      };
    });
    this.wake = null;
    return null;
  }

  private fromStdin(): SourceRecord[] {
    return this.stdinLines.splice(0, this.batchSize).map(
      (line) =>
        new SourceRecord({
          sourcePartition: null,
          sourceOffset: null,
          topic: this.topic,
          valueSchema: Schemas.STRING,
          value: line,
        }),
    );
  }

  private async fromFile(): Promise<SourceRecord[]> {
    if (this.handle === null) {
      try {
        this.handle = await open(this.file!, 'r');
      } catch (err) {
        // Kafka's task waits for a file that does not exist yet.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw err;
      }
    }
    const out: SourceRecord[] = [];
    while (out.length < this.batchSize) {
      const newline = this.pending.indexOf(0x0a);
      if (newline < 0) {
        const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
        const { bytesRead } = await this.handle.read(
          chunk,
          0,
          READ_CHUNK_BYTES,
          this.position + this.pending.length,
        );
        if (bytesRead === 0) break;
        this.pending = Buffer.concat([this.pending, chunk.subarray(0, bytesRead)]);
        continue;
      }
      let line = this.pending.subarray(0, newline).toString('utf8');
      if (line.endsWith('\r')) line = line.slice(0, -1);
      this.position += newline + 1;
      this.pending = this.pending.subarray(newline + 1);
      out.push(
        new SourceRecord({
          sourcePartition: { filename: this.file },
          sourceOffset: { position: this.position },
          topic: this.topic,
          valueSchema: Schemas.STRING,
          value: line,
        }),
      );
    }
    return out;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.handle?.close();
    this.handle = null;
  }
}
