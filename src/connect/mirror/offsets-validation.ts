// What the Mirror connectors accept from the offsets endpoints (KIP-875), with Kafka's MirrorUtils checks and
// messages: each non-null offset must sit under a source partition of the connector's form and hold an integer
// "offset" (any non-negative one for MirrorSourceConnector, only 0 for the checkpoint and heartbeat connectors,
// which do not read their offsets back). Null offsets are always taken, so stray offsets can be removed. Maps are
// written as Java prints them (`{topic=t, partition=0}`), in the order of the request's keys.

import type { SourceOffsets } from '../api/connector.js';
import { ConnectException } from '../errors.js';

/** The source partition's keys whose values must be strings, and whether it has an integer "partition" too. */
export interface MirrorPartitionForm {
  strings: readonly string[];
  partition: boolean;
  onlyOffsetZero: boolean;
}

export const MIRROR_SOURCE_PARTITIONS: MirrorPartitionForm = {
  strings: ['cluster', 'topic'],
  partition: true,
  onlyOffsetZero: false,
};
export const MIRROR_CHECKPOINT_PARTITIONS: MirrorPartitionForm = {
  strings: ['group', 'topic'],
  partition: true,
  onlyOffsetZero: true,
};
export const MIRROR_HEARTBEAT_PARTITIONS: MirrorPartitionForm = {
  strings: ['sourceClusterAlias', 'targetClusterAlias'],
  partition: false,
  onlyOffsetZero: true,
};

/** Throws Kafka's ConnectException for the first offset that does not fit `form`; true otherwise. */
export function validateMirrorOffsets(offsets: SourceOffsets, form: MirrorPartitionForm): boolean {
  for (const { partition, offset } of offsets) {
    if (offset === null) continue;
    for (const key of form.strings) {
      if (!(key in partition))
        throw new ConnectException(
          `Source partition ${javaMap(partition)} is missing the '${key}' key, which is required`,
        );
      if (typeof partition[key] !== 'string') {
        throw new ConnectException(
          `Source partition ${javaMap(partition)} has an invalid value ${String(partition[key])} ` +
            `for the '${key}' key, which must be a string`,
        );
      }
    }
    if (form.partition) validatePartitionKey(partition);
    validateOffset(partition, offset, form.onlyOffsetZero);
  }
  return true;
}

function validatePartitionKey(partition: Record<string, unknown>): void {
  const p = javaMap(partition);
  if (!('partition' in partition))
    throw new ConnectException(`Source partition ${p} is missing the 'partition' key, which is required`);
  const value = partition.partition;
  if (!isInteger(value) || Number(value) > 2 ** 31 - 1) {
    throw new ConnectException(
      `Source partition ${p} has an invalid value ${String(value)} for the 'partition' key, which must be an integer`,
    );
  }
  if (Number(value) < 0) {
    throw new ConnectException(
      `Source partition ${p} has an invalid value ${String(value)} for the 'partition' key, which cannot be negative`,
    );
  }
}

function validateOffset(
  partition: Record<string, unknown>,
  offset: Record<string, unknown>,
  onlyOffsetZero: boolean,
): void {
  const what = `Source offset ${javaMap(offset)} for source partition ${javaMap(partition)}`;
  if (!('offset' in offset))
    throw new ConnectException(`${what} is missing the 'offset' key, which is required`);
  const value = offset.offset;
  if (!isInteger(value)) {
    throw new ConnectException(
      `${what} has an invalid value ${String(value)} for the 'offset' key, which must be an integer`,
    );
  }
  if (onlyOffsetZero && Number(value) !== 0) {
    throw new ConnectException(
      `${what} has an invalid value ${String(value)} for the 'offset' key; the only accepted value is 0`,
    );
  }
  if (!onlyOffsetZero && Number(value) < 0) {
    throw new ConnectException(
      `${what} has an invalid value ${String(value)} for the 'offset' key, which cannot be negative`,
    );
  }
}

/** A JSON integer (Java's Integer or Long after the runtime's JSON round trip). */
function isInteger(v: unknown): boolean {
  return typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));
}

/** A map as Java's AbstractMap.toString prints it. */
function javaMap(m: Record<string, unknown>): string {
  return `{${Object.entries(m)
    .map(([k, v]) => `${k}=${v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join(', ')}}`;
}
