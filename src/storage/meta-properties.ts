// meta.properties: the identity of a log directory (which broker and cluster wrote it), in Java properties
// syntax as Kafka writes it. A broker refuses a directory whose broker.id or cluster.id differs from its own;
// that check belongs to the broker, this file only reads and writes the properties.
//
//   #
//   #<date>
//   version=0
//   broker.id=1
//   cluster.id=<cluster id>

import { readSmallFile, StorageFormatError, writeFileAtomic } from './atomic-file.js';

const FILE_BYTES_MAX = 64 * 1024;

export interface MetaProperties {
  readonly version: number;
  readonly brokerId: number;
  readonly clusterId: string;
}

/** Parses Java properties: `key=value`, `key: value` or `key value`; `#` and `!` start comments. */
export function parseJavaProperties(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trimStart();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const sep = line.search(/[=:\s]/);
    if (sep < 0) {
      out.set(line, '');
      continue;
    }
    const key = line.slice(0, sep);
    const value = line.slice(sep + 1).replace(/^[\s=:]*/, '');
    out.set(key, value.trimEnd());
  }
  return out;
}

export function encodeMetaProperties(meta: MetaProperties, now = new Date()): string {
  return `#\n#${now.toUTCString()}\nversion=${meta.version}\nbroker.id=${meta.brokerId}\ncluster.id=${meta.clusterId}\n`;
}

export function decodeMetaProperties(path: string, text: string): MetaProperties {
  const props = parseJavaProperties(text);
  const version = Number(props.get('version'));
  const brokerId = Number(props.get('broker.id'));
  const clusterId = props.get('cluster.id');
  if (version !== 0 && version !== 1) throw new StorageFormatError(path, 'missing or unknown version');
  if (!Number.isInteger(brokerId) || brokerId < 0 || brokerId > 0x7fffffff) {
    throw new StorageFormatError(path, 'missing or bad broker.id');
  }
  if (clusterId === undefined || clusterId === '') throw new StorageFormatError(path, 'missing cluster.id');
  return { version, brokerId, clusterId };
}

export function writeMetaProperties(path: string, meta: MetaProperties): void {
  writeFileAtomic(path, encodeMetaProperties(meta));
}

export function readMetaProperties(path: string): MetaProperties | null {
  const bytes = readSmallFile(path, FILE_BYTES_MAX);
  return bytes === null ? null : decodeMetaProperties(path, bytes.toString('utf8'));
}
