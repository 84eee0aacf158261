// Source offsets in a compacted topic (Kafka Connect's KafkaOffsetBackingStore layout): the key is the JSON
// ["<connector>", <partition>] and the value the offset's JSON (a null value deletes), partitioned by the key's
// murmur2 hash as Kafka's producer does, so Kafka's tools and Connect workers read the same records. MirrorMaker
// keeps each flow's offsets in `mm2-offsets.<source>.internal` on the target cluster. start() reads the topic
// to its end before anything is served; write() returns once every record is acknowledged (acks=all), and only
// then changes the copy in memory, so a crash at any point leaves the topic at the old or the new offsets.

import { Admin, type ClientOptions, Consumer, Producer } from '../../client/index.js';
import type { SourceOffset, SourcePartition } from '../api/records.js';
import { stringifyJson } from '../converters/json-text.js';
import { OffsetTable, offsetKey } from '../runtime/offset-store.js';

/** Kafka's offset.storage.partitions default. */
const OFFSET_TOPIC_PARTITIONS = 25;
const READ_TO_END_TIMEOUT_MS = 60_000;

export class TopicOffsetStore extends OffsetTable {
  private producer: Producer | null = null;

  constructor(
    private readonly client: ClientOptions,
    readonly topic: string,
    private readonly replicationFactor: number,
  ) {
    super();
  }

  async start(): Promise<void> {
    const admin = new Admin(this.client);
    try {
      if (!(await admin.listTopics({ listInternal: true })).includes(this.topic)) {
        const brokers = (await admin.describeCluster()).brokers.length;
        const [r] = await admin.createTopics([
          {
            topic: this.topic,
            numPartitions: OFFSET_TOPIC_PARTITIONS,
            replicationFactor: this.replicationFactor > brokers ? -1 : this.replicationFactor,
            configs: { 'cleanup.policy': 'compact' },
          },
        ]);
        if (r?.error && r.error.code !== 36) throw r.error;
      }
    } finally {
      await admin.close();
    }
    await this.readToEnd();
    this.producer = new Producer({ ...this.client, acks: 'all', lingerMs: 0 });
  }

  private async readToEnd(): Promise<void> {
    const consumer = new Consumer({ ...this.client, enableAutoCommit: false, autoOffsetReset: 'earliest' });
    try {
      const admin = new Admin(this.client);
      let count: number;
      try {
        const [d] = await admin.describeTopics([this.topic]);
        count = d?.partitions.length ?? 0;
      } finally {
        await admin.close();
      }
      const tps = Array.from({ length: count }, (_, partition) => ({ topic: this.topic, partition }));
      consumer.assign(tps);
      await consumer.seekToBeginning(tps);
      const ends = new Map((await consumer.endOffsets(tps)).map((e) => [e.partition, e.offset]));
      const remaining = new Set(
        tps.filter((tp) => (ends.get(tp.partition) ?? 0) > 0).map((tp) => tp.partition),
      );
      const deadline = Date.now() + READ_TO_END_TIMEOUT_MS;
      while (remaining.size > 0) {
        if (Date.now() > deadline) throw new Error(`Timed out reading ${this.topic} to its end`);
        for (const r of await consumer.poll(500)) {
          if (r.key === null) continue;
          const k = r.key.toString('utf8');
          if (r.value === null) this.data.delete(k);
          else this.data.set(k, r.value.toString('utf8'));
        }
        for (const p of [...remaining]) {
          if ((await consumer.position({ topic: this.topic, partition: p })) >= ends.get(p)!)
            remaining.delete(p);
        }
      }
    } finally {
      await consumer.close();
    }
  }

  async write(
    connector: string,
    entries: { partition: SourcePartition; offset: SourceOffset | null }[],
  ): Promise<void> {
    const producer = this.producer;
    if (producer === null) throw new Error(`${this.topic}: the offset store is not started`);
    const records = entries.map((e) => ({
      key: offsetKey(connector, e.partition),
      value: e.offset === null ? null : stringifyJson(e.offset),
    }));
    await producer.sendBatch(
      records.map((r) => ({
        topic: this.topic,
        key: Buffer.from(r.key, 'utf8'),
        value: r.value === null ? null : Buffer.from(r.value, 'utf8'),
      })),
    );
    for (const r of records) {
      if (r.value === null) this.data.delete(r.key);
      else this.data.set(r.key, r.value);
    }
  }

  async close(): Promise<void> {
    await this.producer?.close();
    this.producer = null;
  }
}
