// PostgresSinkConnector: writes topics into PostgreSQL tables with the JDBC sink connector's configs
// (sink-config.ts). Each task holds a pg Pool; put() writes its batch in one transaction (sink-writer.ts), so
// the offsets the runtime commits afterwards never run ahead of the database, and upserts make a redelivery
// after a crash harmless. A failed write is retried max.retries times, retry.backoff.ms apart (the runtime
// delivers the same records again on a RetriableException), then fails the task.

import type pg from 'pg';
import type { ConfigValue } from '../../api/config-def.js';
import { RetriableException, SinkConnector, SinkTask, type TaskConfig } from '../../api/connector.js';
import type { SinkRecord } from '../../api/records.js';
import { ConnectException } from '../../errors.js';
import { BROOK_CONNECT_VERSION } from '../../version.js';
import { openPool } from './connection.js';
import { parseSinkConfig, type SinkConfig, sinkConfigDef, sinkConfigErrors } from './sink-config.js';
import { SinkWriter } from './sink-writer.js';

export class PostgresSinkConnector extends SinkConnector {
  static readonly className = 'brook.connect.postgres.PostgresSinkConnector';
  private props: Record<string, string> = {};

  version(): string {
    return BROOK_CONNECT_VERSION;
  }
  start(props: Record<string, string>): void {
    parseSinkConfig(props);
    const errors = sinkConfigErrors(props);
    if (errors.length > 0) throw new ConnectException(errors.map((e) => e.message).join('; '));
    this.props = props;
  }
  taskClass() {
    return PostgresSinkTask;
  }
  taskConfigs(maxTasks: number): TaskConfig[] {
    return Array.from({ length: maxTasks }, () => ({ ...this.props }));
  }
  stop(): void {}
  config() {
    return sinkConfigDef();
  }
  override validate(props: Record<string, string>): ConfigValue[] {
    const values = sinkConfigDef().validate(props);
    for (const e of sinkConfigErrors(props)) values.find((v) => v.name === e.key)?.errors.push(e.message);
    return values;
  }
}

export class PostgresSinkTask extends SinkTask {
  private config!: SinkConfig;
  private pool: pg.Pool | null = null;
  private writer!: SinkWriter;
  private retriesLeft = 0;

  version(): string {
    return BROOK_CONNECT_VERSION;
  }

  start(props: TaskConfig): void {
    this.config = parseSinkConfig(props);
    this.pool = openPool({
      url: this.config.url,
      user: this.config.user,
      password: this.config.password,
      poolSize: this.config.poolSize,
    });
    this.writer = new SinkWriter(this.config, props.name ?? 'postgres-sink');
    this.retriesLeft = this.config.maxRetries;
  }

  async put(records: SinkRecord[]): Promise<void> {
    if (records.length === 0) return;
    try {
      const client = await this.pool!.connect();
      try {
        await this.writer.write(client, records);
      } finally {
        client.release();
      }
      this.retriesLeft = this.config.maxRetries;
    } catch (err) {
      if (err instanceof ConnectException || this.retriesLeft <= 0) throw err;
      this.retriesLeft--;
      await new Promise((r) => setTimeout(r, this.config.retryBackoffMs));
      throw new RetriableException(
        `Write to PostgreSQL failed, ${this.retriesLeft} retries left: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }

  async stop(): Promise<void> {
    await this.pool?.end();
    this.pool = null;
  }
}
