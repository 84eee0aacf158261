// Records that connectors make and receive (Kafka's ConnectRecord, SourceRecord, SinkRecord): a topic, an
// optional partition, key and value each with a schema, a timestamp and Connect headers. Records are immutable;
// transforms make new ones with newRecord().

import type { Schema } from '../data/schema.js';

export interface ConnectHeader {
  readonly key: string;
  readonly schema: Schema | null;
  readonly value: unknown;
}

export interface ConnectRecordFields {
  topic: string;
  kafkaPartition?: number | null;
  keySchema?: Schema | null;
  key?: unknown;
  valueSchema?: Schema | null;
  value?: unknown;
  /** Milliseconds since the epoch, or null. */
  timestamp?: number | null;
  headers?: readonly ConnectHeader[];
}

export abstract class ConnectRecord<R extends ConnectRecord<R> = ConnectRecord<never>> {
  readonly topic: string;
  readonly kafkaPartition: number | null;
  readonly keySchema: Schema | null;
  readonly key: unknown;
  readonly valueSchema: Schema | null;
  readonly value: unknown;
  readonly timestamp: number | null;
  readonly headers: readonly ConnectHeader[];

  constructor(f: ConnectRecordFields) {
    this.topic = f.topic;
    this.kafkaPartition = f.kafkaPartition ?? null;
    this.keySchema = f.keySchema ?? null;
    this.key = f.key ?? null;
    this.valueSchema = f.valueSchema ?? null;
    this.value = f.value === undefined ? null : f.value;
    this.timestamp = f.timestamp ?? null;
    this.headers = f.headers ?? [];
  }

  /** A copy with some fields changed (what transforms return). */
  abstract newRecord(changes: Partial<ConnectRecordFields>): R;

  protected fields(): ConnectRecordFields {
    return {
      topic: this.topic,
      kafkaPartition: this.kafkaPartition,
      keySchema: this.keySchema,
      key: this.key,
      valueSchema: this.valueSchema,
      value: this.value,
      timestamp: this.timestamp,
      headers: this.headers,
    };
  }
}

export type SourcePartition = Record<string, unknown>;
export type SourceOffset = Record<string, unknown>;

export interface SourceRecordFields extends ConnectRecordFields {
  /** Where in the source system the record comes from (a file, a table); null for none. */
  sourcePartition: SourcePartition | null;
  /** The position in that partition after this record; what the connector resumes from. */
  sourceOffset: SourceOffset | null;
}

export class SourceRecord extends ConnectRecord<SourceRecord> {
  readonly sourcePartition: SourcePartition | null;
  readonly sourceOffset: SourceOffset | null;

  constructor(f: SourceRecordFields) {
    super(f);
    this.sourcePartition = f.sourcePartition;
    this.sourceOffset = f.sourceOffset;
  }

  newRecord(changes: Partial<ConnectRecordFields>): SourceRecord {
    return new SourceRecord({
      ...this.fields(),
      sourcePartition: this.sourcePartition,
      sourceOffset: this.sourceOffset,
      ...changes,
    });
  }
}

export interface SinkRecordFields extends ConnectRecordFields {
  kafkaOffset: number;
  timestampType?: 'CreateTime' | 'LogAppendTime' | 'NoTimestampType';
  /** The topic, partition and offset the record was read from, kept across transforms that reroute it. */
  originalTopic?: string;
  originalKafkaPartition?: number | null;
  originalKafkaOffset?: number;
}

export class SinkRecord extends ConnectRecord<SinkRecord> {
  readonly kafkaOffset: number;
  readonly timestampType: 'CreateTime' | 'LogAppendTime' | 'NoTimestampType';
  readonly originalTopic: string;
  readonly originalKafkaPartition: number | null;
  readonly originalKafkaOffset: number;

  constructor(f: SinkRecordFields) {
    super(f);
    this.kafkaOffset = f.kafkaOffset;
    this.timestampType = f.timestampType ?? 'CreateTime';
    this.originalTopic = f.originalTopic ?? f.topic;
    this.originalKafkaPartition = f.originalKafkaPartition ?? f.kafkaPartition ?? null;
    this.originalKafkaOffset = f.originalKafkaOffset ?? f.kafkaOffset;
  }

  newRecord(changes: Partial<ConnectRecordFields>): SinkRecord {
    return new SinkRecord({
      ...this.fields(),
      kafkaOffset: this.kafkaOffset,
      timestampType: this.timestampType,
      originalTopic: this.originalTopic,
      originalKafkaPartition: this.originalKafkaPartition,
      originalKafkaOffset: this.originalKafkaOffset,
      ...changes,
    });
  }
}
