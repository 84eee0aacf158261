// `brook dump-log`: Kafka's kafka-dump-log.sh, offline. Decodes segment files (.log: batch headers, and records
// with --print-data-log or --deep-iteration), offset indexes (.index: "offset: O position: P") and time indexes
// (.timeindex: "timestamp: T offset: O") and transaction indexes (.txnindex: "version: V producerId: P firstOffset: F
// lastOffset: L lastStableOffset: S", one line per aborted transaction, as Kafka prints them). Index files may be preallocated with zero entries past their end;
// like Kafka's reader, the dump stops at the first zero entry after the first.
// An encrypted segment (a `.enc` beside its `.log`) is decrypted when the tool is given the master key provider
// (--encryption-config, a properties file with the broker's brook.encryption.* keys, or --key-file): the log
// directory's encryption.keys is unwrapped with it and each chunk verified before it is decoded. Without a
// provider, or when verification fails, the tool says so instead of decoding ciphertext.

import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { parseProperties } from '../broker/config/properties-parser.js';
import { compressionName } from '../protocol/compression/compression-type.js';
import { isBatchCrcValid } from '../protocol/records/batch-crc.js';
import { batchHeader } from '../protocol/records/batch-header.js';
import { iterateRecords } from '../protocol/records/batch-records.js';
import { decodeRecordsBlob } from '../protocol/records/decode-records-blob.js';
import { RecordsCursor } from '../protocol/records/records-cursor.js';
import { createProvider } from '../storage/encryption/encryption-setup.js';
import { KeyStore } from '../storage/encryption/key-store.js';
import { IndexFileKind, SegmentCipher } from '../storage/encryption/segment-cipher.js';
import { readEncryptedSegment } from '../storage/encryption/segment-file.js';
import { TXN_INDEX_ENTRY_BYTES } from '../storage/txn-index.js';
import { type ParsedArgs, UsageError } from './args.js';
import { err, out, runTool, type Tool } from './client-tool.js';
import { Progress } from './progress.js';

const tool: Tool = {
  name: 'dump-log',
  summary: 'Decode log segment and index files.',
  specs: {
    files: { value: true, help: 'REQUIRED: comma-separated .log, .index, .timeindex or .txnindex files.' },
    'print-data-log': { help: 'Print the records (keys and payloads) of each batch.' },
    'deep-iteration': { help: 'Iterate over the records of each batch.' },
    'max-bytes': { value: true, help: 'Bytes of a .log file to read (default the whole file).' },
    'encryption-config': {
      value: true,
      help: 'Properties file with the brook.encryption.key.* settings that decrypt encrypted segments.',
    },
    'key-file': { value: true, help: 'Master key file for encrypted segments (brook.encryption.key.file).' },
  },
  run,
};

export function runDumpLog(args: string[]): Promise<number> {
  return runTool(tool, args);
}

function baseOffsetOf(path: string): number {
  const m = /^(\d{20})\./.exec(basename(path));
  return m === null ? 0 : Number(m[1]);
}

async function run(args: ParsedArgs): Promise<number> {
  const files = args
    .required('files')
    .split(',')
    .filter((f) => f !== '');
  if (files.length === 0) throw new UsageError('--files names no file');
  let code = 0;
  const json: unknown[] = [];
  // Progress on a terminal while the dump goes to a file or a pipe (or is held for --json): a large segment
  // takes a while, and its lines are not on the screen to show it.
  const progress = new Progress(process.stderr, args.has('json') || process.stdout.isTTY !== true);
  for (const [i, file] of files.entries()) {
    progress.update(`${file} (${i + 1}/${files.length}): reading`, true);
    if (!args.has('json')) out(`Dumping ${file}`);
    let result: unknown;
    if (file.endsWith('.log')) {
      const read = await readLogFile(file, args);
      if (read.error !== undefined) {
        progress.clear();
        if (!args.has('json')) err(read.error);
        result = { batches: [], error: read.error };
      } else {
        result = dumpLog(read.bytes, args, baseOffsetOf(file), {
          show: (position, size) =>
            progress.update(
              `${file} (${i + 1}/${files.length}): ${megabytes(position)} of ${megabytes(size)} MB decoded`,
            ),
          clear: () => progress.clear(),
        });
        if (read.note !== undefined) {
          progress.clear();
          if (!args.has('json')) err(read.note);
          result = { ...(result as object), error: read.note };
        }
      }
      if (args.has('json')) json.push({ file, ...(result as object) });
      if ((result as { error?: string }).error !== undefined) code = 1;
      continue;
    }
    const index = await readIndexFile(file, args);
    if (index.error !== undefined) {
      progress.clear();
      if (!args.has('json')) err(index.error);
      if (args.has('json')) json.push({ file, entries: [], error: index.error });
      code = 1;
      continue;
    }
    const buf = index.bytes;
    if (file.endsWith('.log')) result = dumpLog(buf, args, baseOffsetOf(file));
    else if (file.endsWith('.index')) result = dumpIndex(buf, baseOffsetOf(file), args.has('json'));
    else if (file.endsWith('.timeindex')) result = dumpTimeIndex(buf, baseOffsetOf(file), args.has('json'));
    else if (file.endsWith('.txnindex')) result = dumpTxnIndex(buf, args.has('json'));
    else {
      progress.clear();
      err(`Ignoring unknown file ${file}`);
      code = 1;
      continue;
    }
    if (args.has('json')) json.push({ file, ...(result as object) });
    if ((result as { error?: string }).error !== undefined) code = 1;
  }
  progress.clear();
  if (args.has('json')) out(JSON.stringify(json));
  return code;
}

function megabytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}

/**
 * A .log file's plaintext: the file itself, or for an encrypted segment its verified, decrypted bytes (up to the
 * first chunk that fails, with a note saying so), or an error saying why it cannot be decrypted.
 */
async function readLogFile(
  file: string,
  args: ParsedArgs,
): Promise<{ bytes: Buffer; note?: string; error?: undefined } | { error: string }> {
  const encPath = file.replace(/\.log$/, '.enc');
  if (!existsSync(encPath)) return { bytes: readFileSync(file) };
  const settings = encryptionSettings(args);
  if (settings === null) {
    return {
      error: `${file} is encrypted (${basename(encPath)}): pass --encryption-config or --key-file to decrypt it`,
    };
  }
  try {
    const store = await KeyStore.load(dirname(dirname(file)), createProvider(settings));
    return readEncryptedSegment(file, encPath, baseOffsetOf(file), store);
  } catch (e) {
    return { error: `${file} cannot be decrypted: ${(e as Error).message}` };
  }
}

/** An index file's plaintext: the file itself, or for an encrypted segment's index files their decryption. */
async function readIndexFile(
  file: string,
  args: ParsedArgs,
): Promise<{ bytes: Buffer; error?: undefined } | { error: string }> {
  const kind = file.endsWith('.index')
    ? IndexFileKind.offset
    : file.endsWith('.timeindex')
      ? IndexFileKind.time
      : file.endsWith('.txnindex')
        ? IndexFileKind.txn
        : null;
  const encPath = file.replace(/\.(index|timeindex|txnindex)$/, '.enc');
  if (kind === null || !existsSync(encPath)) return { bytes: readFileSync(file) };
  const settings = encryptionSettings(args);
  if (settings === null) {
    return {
      error: `${file} is encrypted (${basename(encPath)}): pass --encryption-config or --key-file to decrypt it`,
    };
  }
  try {
    const store = await KeyStore.load(dirname(dirname(file)), createProvider(settings));
    const cipher = SegmentCipher.open(encPath, baseOffsetOf(file), store);
    try {
      const bytes = readFileSync(file);
      return { bytes: cipher.indexCrypt(kind).apply(bytes, 0, bytes.length, 0) };
    } finally {
      cipher.close();
    }
  } catch (e) {
    return { error: `${file} cannot be decrypted: ${(e as Error).message}` };
  }
}

function encryptionSettings(args: ParsedArgs): Parameters<typeof createProvider>[0] | null {
  const configPath = args.get('encryption-config');
  const props =
    configPath === undefined ? new Map<string, string>() : parseProperties(readFileSync(configPath, 'utf8'));
  const keyFile = args.get('key-file') ?? props.get('brook.encryption.key.file') ?? null;
  const provider = props.get('brook.encryption.key.provider') ?? (keyFile !== null ? 'file' : null);
  if (provider === null) return null;
  return {
    enable: true,
    provider,
    keyFile,
    keyEnv: props.get('brook.encryption.key.env') ?? 'BROOK_ENCRYPTION_KEY',
    httpUrl: props.get('brook.encryption.key.http.url') ?? null,
    httpKeyId: props.get('brook.encryption.key.http.key.id') ?? null,
    httpToken: props.get('brook.encryption.key.http.token') ?? null,
    httpTimeoutMs: Number(props.get('brook.encryption.key.http.timeout.ms') ?? 10000),
  };
}

function text(b: Buffer | null): string {
  return b === null ? 'null' : b.toString('utf8');
}

function dumpLog(
  all: Buffer,
  args: ParsedArgs,
  startOffset: number,
  progress: { show(position: number, size: number): void; clear(): void } = { show() {}, clear() {} },
): { batches: unknown[]; error?: string } {
  const maxBytes = args.int('max-bytes');
  const buf = maxBytes === undefined ? all : all.subarray(0, maxBytes);
  const asJson = args.has('json');
  const deep = args.has('print-data-log') || args.has('deep-iteration');
  if (!asJson) out(`Log starting offset: ${startOffset}`);
  const cursor = new RecordsCursor(buf);
  const batches: unknown[] = [];
  while (cursor.next()) {
    const pos = cursor.position;
    progress.show(pos, buf.length);
    if (cursor.magic < 2) {
      const legacy = decodeRecordsBlob(buf, pos, pos + cursor.sizeInBytes).batches[0]!;
      for (const r of legacy.records) {
        const line = `offset: ${r.offset} position: ${pos} CreateTime: ${r.timestamp} isvalid: true keysize: ${r.key?.length ?? -1} valuesize: ${r.value?.length ?? -1} magic: ${legacy.magic}`;
        if (asJson)
          batches.push({ magic: legacy.magic, offset: r.offset, position: pos, timestamp: r.timestamp });
        else
          out(
            deep && args.has('print-data-log')
              ? `${line} key: ${text(r.key)} payload: ${text(r.value)}`
              : line,
          );
      }
      continue;
    }
    const h = {
      baseOffset: batchHeader.baseOffset(buf, pos),
      lastOffset: batchHeader.lastOffset(buf, pos),
      count: batchHeader.recordsCount(buf, pos),
      baseSequence: batchHeader.baseSequence(buf, pos),
      lastSequence: batchHeader.lastSequence(buf, pos),
      producerId: batchHeader.producerId(buf, pos),
      producerEpoch: batchHeader.producerEpoch(buf, pos),
      partitionLeaderEpoch: batchHeader.partitionLeaderEpoch(buf, pos),
      isTransactional: batchHeader.isTransactional(buf, pos),
      isControl: batchHeader.isControl(buf, pos),
      deleteHorizonMs: batchHeader.deleteHorizonMs(buf, pos),
      position: pos,
      timestampType: batchHeader.timestampType(buf, pos) === 1 ? 'LogAppendTime' : 'CreateTime',
      maxTimestamp: batchHeader.maxTimestamp(buf, pos),
      size: cursor.sizeInBytes,
      magic: 2,
      compresscodec: compressionName(batchHeader.compression(buf, pos) as never) ?? 'unknown',
      crc: batchHeader.crc(buf, pos),
      isvalid: isBatchCrcValid(buf, pos),
    };
    const records: unknown[] = [];
    if (!asJson) {
      out(
        `baseOffset: ${h.baseOffset} lastOffset: ${h.lastOffset} count: ${h.count} baseSequence: ${h.baseSequence} lastSequence: ${h.lastSequence} producerId: ${h.producerId} producerEpoch: ${h.producerEpoch} partitionLeaderEpoch: ${h.partitionLeaderEpoch} isTransactional: ${h.isTransactional} isControl: ${h.isControl} deleteHorizonMs: ${h.deleteHorizonMs < 0 ? 'OptionalLong.empty' : `OptionalLong[${h.deleteHorizonMs}]`} position: ${h.position} ${h.timestampType}: ${h.maxTimestamp} size: ${h.size} magic: 2 compresscodec: ${h.compresscodec} crc: ${h.crc} isvalid: ${h.isvalid}`,
      );
    }
    if (deep && h.isvalid) {
      let i = 0;
      for (const r of iterateRecords(buf, pos)) {
        const seq = h.baseSequence < 0 ? -1 : (h.baseSequence + i) % 0x8000_0000;
        i++;
        const headerKeys = r.headers.map((x) => x.key);
        if (asJson) {
          records.push({
            offset: r.offset,
            timestamp: r.timestamp,
            keySize: r.key?.length ?? -1,
            valueSize: r.value?.length ?? -1,
            sequence: seq,
            headerKeys,
            key: args.has('print-data-log') ? text(r.key) : undefined,
            payload: args.has('print-data-log') ? text(r.value) : undefined,
          });
          continue;
        }
        let line = `| offset: ${r.offset} ${h.timestampType}: ${r.timestamp} keySize: ${r.key?.length ?? -1} valueSize: ${r.value?.length ?? -1} sequence: ${seq} headerKeys: [${headerKeys.join(',')}]`;
        if (args.has('print-data-log')) {
          if (h.isControl) line += ' endTxnMarker';
          else {
            if (r.key !== null) line += ` key: ${text(r.key)}`;
            line += ` payload: ${text(r.value)}`;
          }
        }
        out(line);
      }
    }
    if (asJson) batches.push({ ...h, records });
  }
  if (cursor.fault !== null) {
    const message = `Found invalid data at position ${cursor.fault.position ?? cursor.position}: ${cursor.fault.message}`;
    progress.clear();
    if (!asJson) err(message);
    return { batches, error: message };
  }
  if (cursor.partialBytes > 0 && !asJson)
    out(`Found ${cursor.partialBytes} bytes of an incomplete batch at the end of the file`);
  return { batches };
}

function dumpIndex(buf: Buffer, baseOffset: number, asJson: boolean): { entries: unknown[] } {
  const entries: { offset: number; position: number }[] = [];
  for (let at = 0; at + 8 <= buf.length; at += 8) {
    const relative = buf.readInt32BE(at);
    const position = buf.readInt32BE(at + 4);
    if (at > 0 && relative === 0 && position === 0) break;
    entries.push({ offset: baseOffset + relative, position });
    if (!asJson) out(`offset: ${baseOffset + relative} position: ${position}`);
  }
  return { entries };
}

function dumpTimeIndex(buf: Buffer, baseOffset: number, asJson: boolean): { entries: unknown[] } {
  const entries: { timestamp: number; offset: number }[] = [];
  for (let at = 0; at + 12 <= buf.length; at += 12) {
    const timestamp = Number(buf.readBigInt64BE(at));
    const relative = buf.readInt32BE(at + 8);
    if (timestamp === 0 && relative === 0 && at > 0) break;
    if (timestamp === 0 && relative === 0 && buf.length === 12) break;
    entries.push({ timestamp, offset: baseOffset + relative });
    if (!asJson) out(`timestamp: ${timestamp} offset: ${baseOffset + relative}`);
  }
  return { entries };
}

function dumpTxnIndex(buf: Buffer, asJson: boolean): { entries: unknown[]; error?: string } {
  const entries: unknown[] = [];
  let at = 0;
  for (; at + TXN_INDEX_ENTRY_BYTES <= buf.length; at += TXN_INDEX_ENTRY_BYTES) {
    const entry = {
      version: buf.readInt16BE(at),
      producerId: Number(buf.readBigInt64BE(at + 2)),
      firstOffset: Number(buf.readBigInt64BE(at + 10)),
      lastOffset: Number(buf.readBigInt64BE(at + 18)),
      lastStableOffset: Number(buf.readBigInt64BE(at + 26)),
    };
    entries.push(entry);
    if (!asJson)
      out(
        `version: ${entry.version} producerId: ${entry.producerId} firstOffset: ${entry.firstOffset} lastOffset: ${entry.lastOffset} lastStableOffset: ${entry.lastStableOffset}`,
      );
  }
  if (at < buf.length) {
    const message = `Found ${buf.length - at} bytes of an incomplete entry at position ${at}`;
    if (!asJson) err(message);
    return { entries, error: message };
  }
  return { entries };
}
