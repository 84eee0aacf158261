// partition.metadata: the topic id of a partition directory, so a directory left by a deleted topic of the same
// name is never mistaken for the new topic's. Two lines, as Kafka writes them:
//
//   version: 0
//   topic_id: <the 16-byte uuid in base64url without padding, 22 characters>

import { readSmallFile, StorageFormatError, writeFileAtomic } from './atomic-file.js';

const VERSION = 0;
const UUID_BYTES = 16;
const FILE_BYTES_MAX = 4096;

/** Kafka prints a Uuid as base64url without padding. */
export function uuidToBase64Url(uuid: Buffer): string {
  if (uuid.length !== UUID_BYTES) throw new RangeError('a topic id is 16 bytes');
  return uuid.toString('base64url');
}

export function base64UrlToUuid(text: string): Buffer | null {
  if (!/^[A-Za-z0-9_-]{22}$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.length === UUID_BYTES ? bytes : null;
}

export function encodePartitionMetadata(topicId: string): string {
  return `version: ${VERSION}\ntopic_id: ${topicId}\n`;
}

export function decodePartitionMetadata(path: string, text: string): { version: number; topicId: string } {
  const lines = text.split('\n').filter((l) => l !== '');
  const fields = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon < 0) throw new StorageFormatError(path, `malformed line: ${line}`);
    fields.set(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  const version = fields.get('version');
  if (version !== String(VERSION)) throw new StorageFormatError(path, `unknown version ${String(version)}`);
  const topicId = fields.get('topic_id');
  if (topicId === undefined || base64UrlToUuid(topicId) === null) {
    throw new StorageFormatError(path, 'missing or malformed topic_id');
  }
  return { version: VERSION, topicId };
}

export function writePartitionMetadata(path: string, topicId: string): void {
  writeFileAtomic(path, encodePartitionMetadata(topicId));
}

/** The topic id recorded in the directory, or null when the file does not exist. */
export function readPartitionMetadata(path: string): string | null {
  const bytes = readSmallFile(path, FILE_BYTES_MAX);
  return bytes === null ? null : decodePartitionMetadata(path, bytes.toString('utf8')).topicId;
}
