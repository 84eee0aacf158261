// Test helper: opens a Log in a temporary directory and appends batches the way a leader does (offsets and
// leader epoch patched into the header before the append).

import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { ManualClock } from '../../src/common/clock.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { Log, type LogOptions } from '../../src/storage/log.js';
import { type LogConfig, logConfig } from '../../src/storage/log-config.js';
import { type BatchSpec, buildBatch } from './batch-builder.js';
import { testRoot } from './tmp-dir.js';

export interface Harness {
  readonly dir: string;
  readonly clock: ManualClock;
  log: Log;
  config: LogConfig;
  /** Builds a batch, assigns it the log end offset and appends it; returns the bytes as stored. */
  append(spec?: BatchSpec, epoch?: number): Buffer;
  /** Closes (cleanly, or not) and reopens the log from disk. */
  reopen(clean: boolean, extra?: Partial<LogOptions>): Log;
}

export function openHarness(t: TestContext, overrides: Partial<LogConfig> = {}): Harness {
  const dir = mkdtempSync(join(testRoot(), 'brook-log-'));
  const clock = new ManualClock();
  const config = logConfig(overrides);
  const harness: Harness = {
    dir,
    clock,
    config,
    log: Log.open({
      dir,
      topicPartition: { topic: 't', partition: 0 },
      config,
      clock,
      hadCleanShutdown: true,
    }),
    append(spec = {}, epoch = 0): Buffer {
      const batch = buildBatch({ baseTimestamp: clock.nowMs(), ...spec });
      batchHeader.setBaseOffset(batch, 0, harness.log.logEndOffset);
      batchHeader.setPartitionLeaderEpoch(batch, 0, epoch);
      harness.log.append(batch);
      return batch;
    },
    reopen(clean: boolean, extra: Partial<LogOptions> = {}): Log {
      const { recoveryPoint, logStartOffset, highWatermark } = harness.log;
      if (clean) harness.log.close();
      else harness.log.abandon();
      harness.log = Log.open({
        dir,
        topicPartition: { topic: 't', partition: 0 },
        config: harness.config,
        clock,
        hadCleanShutdown: clean,
        recoveryPoint,
        logStartOffset,
        highWatermark,
        ...extra,
      });
      return harness.log;
    },
  };
  // One hook, so the log is closed before its directory goes (hooks of separate helpers run in order of
  // registration, which would remove the directory first).
  t.after(async () => {
    try {
      if (!harness.log.isClosed) harness.log.close();
      // A checkpoint write that the close superseded may still be running: it creates and removes its
      // temporary file in the directory, so let it finish before the directory goes.
      await harness.log.epochCache.whenPersisted();
    } finally {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    }
  });
  return harness;
}
