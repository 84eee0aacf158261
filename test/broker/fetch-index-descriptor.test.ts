// Consumers reading older parts of one segment at different places: the segment's kept header of the batch a read
// cut (fetch-next-batch.test.ts) answers one of them at most, so the others' offset lookups go through the offset
// index, whose older entries are read from its file (storage/index-file.ts). Kafka keeps each index mmapped; here
// the descriptor of a recently looked-up index stays open, so those lookups open and close no file, and the
// entries a cold search probes and the pages it ends in are kept. Through a broker in this process on real
// TCP (no tail cache, an index entry for every batch), with node:fs's openSync, closeSync and readSync counted for
// the .index files.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { STORAGE_LIMITS } from '../../src/storage/log-config.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, fetchValuesAt, produceBatch, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'index-descriptor';
/** Enough batches (one 8-byte index entry each) that the first thousand or so entries are only in the file. */
const BATCHES = 3 * (STORAGE_LIMITS.indexWarmBytes / 8);
const VALUE_BYTES = 900;
/** Room for one batch and part of the next. */
const PARTITION_MAX_BYTES = 1500;
/** Where the readers start: all in the index's cold part, far enough apart never to meet. */
const STARTS = [0, 200, 400];
const ROUNDS = 100;

const recordValue = (i: number): string => `${i}:`.padEnd(VALUE_BYTES, 'v');

/** Opens, closes and reads of .index files, counted while `counting` is set. */
interface IndexFileCalls {
  counting: boolean;
  opens: number;
  closes: number;
  reads: number;
}

function countIndexFileCalls(): { calls: IndexFileCalls; restore: () => void } {
  const calls: IndexFileCalls = { counting: false, opens: 0, closes: 0, reads: 0 };
  const original = { openSync: fs.openSync, closeSync: fs.closeSync, readSync: fs.readSync };
  const indexFds = new Set<number>();
  fs.openSync = ((path: fs.PathLike, ...rest: unknown[]) => {
    const fd = (original.openSync as (...args: unknown[]) => number)(path, ...rest);
    if (String(path).endsWith('.index')) {
      indexFds.add(fd);
      if (calls.counting) calls.opens++;
    }
    return fd;
  }) as typeof fs.openSync;
  fs.closeSync = (fd: number) => {
    if (indexFds.delete(fd) && calls.counting) calls.closes++;
    original.closeSync(fd);
  };
  fs.readSync = ((fd: number, ...rest: unknown[]) => {
    if (indexFds.has(fd) && calls.counting) calls.reads++;
    return (original.readSync as (...args: unknown[]) => number)(fd, ...rest);
  }) as typeof fs.readSync;
  syncBuiltinESMExports();
  return {
    calls,
    restore: () => {
      Object.assign(fs, original);
      syncBuiltinESMExports();
    },
  };
}

describe('consumers looking up offsets in the cold part of one segment', () => {
  let broker: InProcessBroker;
  let client: WireClient;
  const spy = countIndexFileCalls();

  before(async () => {
    broker = await startInProcessBroker({ 'brook.log.tail.cache.bytes': 0 });
    client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, TOPIC, { numPartitions: 1, configs: { 'index.interval.bytes': '1' } });
    for (let i = 0; i < BATCHES; i++) {
      const answer = await produceBatch(client, TOPIC, buildBatch([{ value: recordValue(i) }]), 1);
      assert.equal(answer.errorCode, ErrorCode.NONE);
    }
  });
  after(async () => {
    spy.restore();
    client?.close();
    await broker?.stop();
  });

  it('answers every record in order, and opens and reads no index file per fetch', async () => {
    const fetchAt = (offset: number) => fetchValuesAt(client, TOPIC, offset, PARTITION_MAX_BYTES);
    // One fetch each first: the index file is opened once at least.
    const next = STARTS.map((s) => s);
    const values: string[][] = STARTS.map(() => []);
    const fetchRound = async (): Promise<void> => {
      // In turn, so each reader's lookup follows another reader's read of the segment.
      for (let r = 0; r < STARTS.length; r++) {
        const answer = await fetchAt(next[r]!);
        values[r]!.push(...answer.values);
        next[r] = answer.next;
      }
    };
    await fetchRound();
    spy.calls.counting = true;
    for (let i = 0; i < ROUNDS; i++) await fetchRound();
    spy.calls.counting = false;
    STARTS.forEach((start, r) => {
      assert.deepEqual(
        values[r],
        Array.from({ length: ROUNDS + 1 }, (_, i) => recordValue(start + i)),
      );
    });
    const fetches = ROUNDS * STARTS.length;
    // Without a kept descriptor every fetch here opens and closes the .index file (1.0 of each per fetch).
    assert.ok(
      spy.calls.opens === 0 && spy.calls.closes === 0,
      `${(spy.calls.opens / fetches).toFixed(2)} opens and ${(spy.calls.closes / fetches).toFixed(2)} closes of the .index file per fetch`,
    );
    // A cold search probes single entries until what is left fits a page, then reads that page (2.00 reads per
    // fetch here). The probes are the same few slots every time, and each reader's searches end in the same page
    // (512 entries) for hundreds of fetches: both are kept, so the index file is read only when a reader moves
    // into a new page, never here.
    assert.ok(
      spy.calls.reads === 0,
      `${(spy.calls.reads / fetches).toFixed(2)} reads of the .index file per fetch`,
    );
  });
});
