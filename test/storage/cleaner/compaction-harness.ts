// Test helper for compaction: a Log of a compacted topic in a temporary `<topic>-0` directory, keyed appends
// built with the protocol module's builder (any codec, producer fields), a reader that decodes every record
// the log serves, and one-call cleaning passes.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { ManualClock } from '../../../src/common/clock.js';
import { toOffset } from '../../../src/common/ids.js';
import {
  type BatchOptions,
  buildBatch,
  buildEndTxnMarkerBatch,
} from '../../../src/protocol/records/batch-builder.js';
import { batchHeader } from '../../../src/protocol/records/batch-header.js';
import { iterateRecords } from '../../../src/protocol/records/batch-records.js';
import { type CleanResult, cleanLog } from '../../../src/storage/cleaner/clean-log.js';
import type { SegmentKeys } from '../../../src/storage/encryption/segment-cipher.js';
import { StorageErrorCode } from '../../../src/storage/error-codes.js';
import { Log } from '../../../src/storage/log.js';
import { type LogConfig, logConfig } from '../../../src/storage/log-config.js';
import { testRoot } from '../tmp-dir.js';

export interface KV {
  key: string | null;
  value: string | null;
}

export interface ReadRecord extends KV {
  offset: number;
}

export const TOPIC_PARTITION = { topic: 'compacted', partition: 0 };

export class CompactionHarness {
  readonly root: string;
  readonly dir: string;
  readonly clock = new ManualClock();
  config: LogConfig;
  log: Log;

  constructor(
    t: TestContext | null,
    overrides: Partial<LogConfig> = {},
    /** An encryption key store: segments are then opened (and, with config.encrypt, written) encrypted. */
    readonly keys: SegmentKeys | null = null,
  ) {
    this.root = mkdtempSync(join(testRoot(), 'brook-compact-'));
    this.dir = join(this.root, 'compacted-0');
    mkdirSync(this.dir);
    this.config = logConfig({ cleanupPolicy: 'compact', retentionMs: -1, ...overrides });
    this.log = this.open(true);
    t?.after(() => this.dispose());
  }

  open(clean: boolean): Log {
    return Log.open({
      dir: this.dir,
      topicPartition: TOPIC_PARTITION,
      config: this.config,
      clock: this.clock,
      hadCleanShutdown: clean,
      highWatermark: Number.MAX_SAFE_INTEGER,
      keys: this.keys,
    });
  }

  /** Closes (or abandons) the log and opens it again from its files. */
  reopen(clean: boolean): Log {
    if (clean) this.log.close();
    else this.log.abandon();
    this.log = this.open(clean);
    this.log.setHighWatermark(this.log.logEndOffset);
    return this.log;
  }

  dispose(): void {
    try {
      if (!this.log.isClosed) this.log.close();
    } finally {
      rmSync(this.root, { recursive: true, force: true });
    }
  }

  /** Appends one batch of keyed records at the log end; the high watermark follows. Returns its base offset. */
  append(records: readonly KV[], options: BatchOptions = {}): number {
    const batch = buildBatch(
      records.map((r) => ({ key: r.key, value: r.value })),
      { timestamp: this.clock.nowMs(), ...options },
    );
    return this.appendBytes(batch);
  }

  appendBytes(batch: Buffer): number {
    const base = this.log.logEndOffset;
    batchHeader.setBaseOffset(batch, 0, base);
    this.log.append(batch);
    this.log.setHighWatermark(this.log.logEndOffset);
    return base;
  }

  marker(commit: boolean, producerId: number, producerEpoch = 0): number {
    return this.appendBytes(
      buildEndTxnMarkerBatch({
        commit,
        coordinatorEpoch: 0,
        producerId,
        producerEpoch,
        timestamp: this.clock.nowMs(),
      }),
    );
  }

  /** Every batch the log serves from its start, as bytes. */
  batches(): Buffer[] {
    const out: Buffer[] = [];
    let offset: number = this.log.logStartOffset;
    while (offset < this.log.logEndOffset) {
      const r = this.log.read(toOffset(offset), 1 << 20);
      if (r.errorCode !== StorageErrorCode.None) throw new Error(`read at ${offset}: ${r.errorCode}`);
      if (r.records.length === 0) break;
      for (let pos = 0; pos < r.records.length; pos += batchHeader.sizeInBytes(r.records, pos)) {
        out.push(r.records.subarray(pos, pos + batchHeader.sizeInBytes(r.records, pos)));
      }
      offset = r.nextOffset;
    }
    return out;
  }

  /** Every data record the log serves (control batches left out), decoded. */
  records(): ReadRecord[] {
    return decodeBatches(this.batches());
  }

  async clean(
    firstDirtyOffset: number = this.log.logStartOffset,
    dedupeBufferBytes = 1 << 20,
  ): Promise<CleanResult | null> {
    return cleanLog(this.log, {
      firstDirtyOffset,
      dedupeBufferBytes,
      loadFactor: 0.9,
      ioBufferBytes: 64 * 1024,
      nowMs: this.clock.nowMs(),
    });
  }
}

export function decodeBatches(batches: readonly Buffer[]): ReadRecord[] {
  const out: ReadRecord[] = [];
  for (const b of batches) {
    if (batchHeader.isControl(b, 0)) continue;
    for (const r of iterateRecords(b, 0)) {
      out.push({ offset: r.offset, key: r.key?.toString() ?? null, value: r.value?.toString() ?? null });
    }
  }
  return out;
}

/** The latest record of each key among `written`, in offset order (what a full cleaning keeps). */
export function latestPerKey(written: readonly ReadRecord[]): ReadRecord[] {
  const last = new Map<string | null, number>();
  for (const r of written) last.set(r.key, r.offset);
  return written.filter((r) => last.get(r.key) === r.offset);
}
