// Child process for the crash test: opens a log directory (recovering it after the previous kill), then
// appends batches whose content is a function of their base offset, with ackAfterFsync, and prints
// "ack <next offset>" each time an append is durable. The parent kills it with SIGKILL at a random moment.
// With a master key file as second argument the log is encrypted at rest (encryption/), and every other append
// goes through the queued path (written off the event loop), as the broker's do.

import { mkdirSync } from 'node:fs';
import { ManualClock } from '../../src/common/clock.js';
import { toOffset } from '../../src/common/ids.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { KeyStore } from '../../src/storage/encryption/key-store.js';
import { FileKeyProvider } from '../../src/storage/encryption/local-key-providers.js';
import { appendQueuedAwaitable } from '../../src/storage/log.js';
import { type LogConfig, logConfig } from '../../src/storage/log-config.js';
import { LogManager } from '../../src/storage/log-manager.js';
import { buildBatch } from './batch-builder.js';

export const CRASH_TP = { topic: 'crash', partition: 0 };

export const crashConfig = (): LogConfig =>
  logConfig({ segmentBytes: 16 * 1024, indexIntervalBytes: 512, ackAfterFsync: true });

/** The encrypted variant: segments large enough to span several 64 KiB chunks. */
export const encryptedCrashConfig = (): LogConfig =>
  logConfig({ segmentBytes: 200 * 1024, indexIntervalBytes: 512, ackAfterFsync: true, encrypt: true });

/** The key store of `dir` for the master keys in `keyFile` (made on first use). */
export async function crashKeyStore(dir: string, keyFile: string): Promise<KeyStore> {
  mkdirSync(dir, { recursive: true });
  const store = await KeyStore.load(dir, new FileKeyProvider(keyFile));
  await store.ensureCurrent(0);
  return store;
}

/** The batch a writer appends at `baseOffset`; the verifier rebuilds it to compare bytes. */
export function crashBatch(baseOffset: number): Buffer {
  const count = 1 + (baseOffset % 5);
  const size = (baseOffset * 7919) % 300;
  const batch = buildBatch({
    values: Array.from({ length: count }, (_, i) => Buffer.alloc(size, (baseOffset + i) & 0xff)),
    baseTimestamp: 1_700_000_000_000 + baseOffset,
    producerId: 42,
    producerEpoch: 0,
    baseSequence: baseOffset,
  });
  batchHeader.setBaseOffset(batch, 0, baseOffset);
  return batch;
}

async function main(): Promise<void> {
  const dir = process.argv[2]!;
  const keyFile = process.argv[3];
  const keys = keyFile === undefined ? null : await crashKeyStore(dir, keyFile);
  const manager = LogManager.open({
    dir,
    clock: new ManualClock(),
    configFor: keys === null ? crashConfig : encryptedCrashConfig,
    keys,
  });
  const log = manager.getOrCreateLog(CRASH_TP);
  process.stdout.write(`start ${log.logEndOffset}\n`);
  for (;;) {
    // A few appends per turn, so group commit has something to group.
    const pending: Promise<void>[] = [];
    let next = 0;
    for (let i = 0; i < 4; i++) {
      const batch = crashBatch(log.logEndOffset);
      if (keys !== null && i % 2 === 1) {
        const info = appendQueuedAwaitable(log, batch);
        pending.push(info.acknowledged!);
        next = info.lastOffset + 1;
        continue;
      }
      const info = log.append(batch);
      pending.push(info.durable!);
      next = info.lastOffset + 1;
    }
    // Every failure is printed, in append order: the first is the cause, later ones may only follow from it.
    const outcomes = await Promise.allSettled(pending);
    const failures = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
    if (failures.length > 0) {
      for (const f of failures)
        process.stderr.write(`${f instanceof Error ? (f.stack ?? String(f)) : String(f)}\n`);
      process.exit(1);
    }
    log.setHighWatermark(toOffset(next));
    process.stdout.write(`ack ${next}\n`);
    if (next % 64 < 4) manager.writeCheckpoints();
  }
}

if (process.argv[1]?.endsWith('crash-writer.js')) {
  main().catch((err) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? String(err)) : String(err)}\n`);
    process.exit(1);
  });
}
