// `npm run bench -- codec-records [options]` (once registered in bench/main.ts): what record-batch work costs
// on the produce and fetch paths, as MB/s and as a ratio to a memcpy (Buffer.copy) of the same bytes measured
// in the same run. Sync work on one core, so the memcpy is the honest ceiling: a ratio of 0.5 means the step
// costs as much as copying the bytes twice.
//
// Measured, each over a blob of v2 batches (--batch-kib per batch, --record-bytes per record):
//   memcpy           Buffer.copy of the whole blob into a preallocated buffer (the reference)
//   crc32c           CRC32C of the whole blob in one call (the checksum's own ceiling)
//   walk-batches     RecordsCursor over the blob: framing only
//   validate         cursor + validateBatch: framing, header and CRC32C (the leader's produce path)
//   validate-deep    the same plus walking every record without allocating
//   decode-records   iterateRecords: every record decoded into objects (consumers, compaction, conversion)
//   <codec>-deep     validate-deep of the blob compressed with each codec (MB/s of uncompressed bytes)
//   <codec>-compress recompressBatch from none to the codec (MB/s of uncompressed bytes)
// Payloads are slices of a text of random words (like log lines), so the LZ codecs find matches; the
// compression ratio is written to the result file. Absolute MB/s drift with the machine's load; the ratios
// to memcpy of the same run are the figures to compare.

import { parseArgs } from 'node:util';
import { crc32c } from '@node-rs/crc32';
import { CompressionType, compressionName } from '../../src/protocol/compression/compression-type.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { iterateRecords } from '../../src/protocol/records/batch-records.js';
import { recompressBatch } from '../../src/protocol/records/recompress.js';
import { RecordsCursor } from '../../src/protocol/records/records-cursor.js';
import { validateBatch } from '../../src/protocol/records/validate-batch.js';
import {
  positiveInteger,
  ratioOfSummaries,
  repeat,
  type Summary,
  stepThroughput,
  summarize,
  wordPayload,
} from '../harness/index.js';
import { ResultWriter } from '../harness/results.js';
import { formatSummaryRange, formatTable } from '../harness/table.js';

const usage = `usage: npm run bench -- codec-records [options]
  --quick              0.3 s per repetition instead of 1 s
  --record-bytes N     value bytes per record (default 1024)
  --batch-kib N        batch size in KiB before compression (default 128)
  --blob-mib N         bytes of batches measured over (default 16)
  --repetitions N      at least 3 (default 3)
  --codecs LIST        codecs to measure (default gzip,snappy,lz4,zstd; "" for none)
  --results-dir DIR    where the result file goes (default bench/results)`;

function makeBatches(recordBytes: number, batchBytes: number, blobBytes: number, codec: number): Buffer[] {
  const perBatch = Math.max(1, Math.floor(batchBytes / (recordBytes + 20)));
  const batches: Buffer[] = [];
  let total = 0;
  let offset = 0;
  while (total < blobBytes) {
    const records = Array.from({ length: perBatch }, () => ({ value: wordPayload(recordBytes) }));
    const batch = buildBatch(records, {
      baseOffset: offset,
      compression: codec,
      timestamp: 1_700_000_000_000,
    });
    batches.push(batch);
    total += perBatch * recordBytes;
    offset += perBatch;
  }
  return batches;
}

interface Figure {
  name: string;
  summary: Summary;
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      quick: { type: 'boolean', default: false },
      'record-bytes': { type: 'string', default: '1024' },
      'batch-kib': { type: 'string', default: '128' },
      'blob-mib': { type: 'string', default: '16' },
      repetitions: { type: 'string', default: '3' },
      codecs: { type: 'string', default: 'gzip,snappy,lz4,zstd' },
      'results-dir': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    return;
  }
  const durationMs = values.quick ? 300 : 1000;
  const recordBytes = positiveInteger('--record-bytes', values['record-bytes']);
  const batchBytes = positiveInteger('--batch-kib', values['batch-kib']) * 1024;
  const blobBytes = positiveInteger('--blob-mib', values['blob-mib']) * 1024 * 1024;
  const repetitions = positiveInteger('--repetitions', values.repetitions);
  const codecNames = values.codecs.split(',').filter((c) => c !== '');
  const codecs = [
    CompressionType.Gzip,
    CompressionType.Snappy,
    CompressionType.Lz4,
    CompressionType.Zstd,
  ].filter((c) => codecNames.includes(compressionName(c)));
  const writer = new ResultWriter({ bench: 'codec-records', args, dir: values['results-dir'] });

  const batches = makeBatches(recordBytes, batchBytes, blobBytes, CompressionType.None);
  const blob = Buffer.concat(batches);
  const target = Buffer.allocUnsafe(blob.length);
  const figures: Figure[] = [];
  const measure = async (name: string, bytesPerStep: number, step: () => void): Promise<void> => {
    const summary = summarize(
      await repeat(repetitions, async () => stepThroughput(durationMs, bytesPerStep, step)),
    );
    figures.push({ name, summary });
    writer.figure(name, 'MB/s', summary, { recordBytes, batchBytes, blobBytes: blob.length });
  };

  await measure('memcpy', blob.length, () => {
    blob.copy(target);
  });
  await measure('crc32c', blob.length, () => {
    crc32c(blob);
  });
  await measure('walk-batches', blob.length, () => {
    const cursor = new RecordsCursor(blob);
    while (cursor.next()) {}
  });
  const validate = (bytes: Buffer, deep: boolean) => () => {
    const cursor = new RecordsCursor(bytes);
    const options = { deep };
    while (cursor.next()) {
      if (validateBatch(bytes, cursor.position, cursor.position + cursor.sizeInBytes, options) !== null) {
        throw new Error('benchmark batch failed validation');
      }
    }
  };
  await measure('validate', blob.length, validate(blob, false));
  await measure('validate-deep', blob.length, validate(blob, true));
  await measure('decode-records', blob.length, () => {
    const cursor = new RecordsCursor(blob);
    while (cursor.next()) for (const _ of iterateRecords(blob, cursor.position));
  });

  for (const codec of codecs) {
    const name = compressionName(codec);
    const packed = Buffer.concat(batches.map((b) => recompressBatch(b, 0, codec)));
    await measure(`${name}-deep`, blob.length, validate(packed, true));
    // Compression is slow: a few batches per step keep each step short.
    const sample = batches.slice(0, 8);
    const sampleBytes = sample.reduce((n, b) => n + b.length, 0);
    await measure(`${name}-compress`, sampleBytes, () => {
      for (const b of sample) recompressBatch(b, 0, codec);
    });
    writer.write(`${name}-ratio`, { compressedBytes: packed.length, uncompressedBytes: blob.length });
  }

  const reference = figures[0]!.summary;
  const rows = figures.map(({ name, summary }) => {
    const r = ratioOfSummaries(summary, reference);
    writer.write(`${name}/memcpy`, { ...r });
    return [name, formatSummaryRange(summary), formatSummaryRange(r)];
  });
  console.log(
    `record batches: ${batches.length} x ${batchBytes / 1024} KiB, ${recordBytes} B records, ` +
      `${(blob.length / 1e6).toFixed(1)} MB; median (min-max) of ${repetitions}`,
  );
  console.log(formatTable(['step', 'MB/s', 'ratio to memcpy'], rows));
  console.log(`results: ${writer.path}`);
}
