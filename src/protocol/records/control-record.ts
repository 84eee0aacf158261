// Control records: the single record of a control batch (attribute bit 0x20). Kafka writes transaction markers
// this way, and KRaft its own metadata markers.
//
//   key    version int16 (0), type int16
//   value  for ABORT and COMMIT markers: version int16 (0), coordinatorEpoch int32
//
// Readers accept newer key and value versions as long as the fields they know are there, which is how Kafka
// keeps markers forward compatible; negative versions are refused.

import { DecodeError } from '../primitives/decode-error.js';

export const ControlRecordType = {
  Abort: 0,
  Commit: 1,
  /** KRaft control records; Brook only recognises them. */
  LeaderChange: 2,
  SnapshotHeader: 3,
  SnapshotFooter: 4,
  KraftVersion: 5,
  KraftVoters: 6,
} as const;
export type ControlRecordType = (typeof ControlRecordType)[keyof typeof ControlRecordType];

const CONTROL_KEY_BYTES = 4;
const END_TXN_MARKER_BYTES = 6;
export const CONTROL_KEY_VERSION = 0;
export const END_TXN_MARKER_VERSION = 0;

export interface ControlKey {
  version: number;
  type: number;
}

export function encodeControlKey(type: ControlRecordType): Buffer {
  const out = Buffer.allocUnsafe(CONTROL_KEY_BYTES);
  out.writeInt16BE(CONTROL_KEY_VERSION, 0);
  out.writeInt16BE(type, 2);
  return out;
}

export function decodeControlKey(key: Buffer | null): ControlKey {
  if (key === null || key.length < CONTROL_KEY_BYTES) {
    throw new DecodeError('truncated', 'control record key shorter than 4 bytes');
  }
  const version = key.readInt16BE(0);
  if (version < 0) throw new DecodeError('unsupported-version', `control key version ${version}`);
  return { version, type: key.readInt16BE(2) };
}

export interface EndTxnMarker {
  version: number;
  coordinatorEpoch: number;
}

export function encodeEndTxnMarker(coordinatorEpoch: number): Buffer {
  const out = Buffer.allocUnsafe(END_TXN_MARKER_BYTES);
  out.writeInt16BE(END_TXN_MARKER_VERSION, 0);
  out.writeInt32BE(coordinatorEpoch, 2);
  return out;
}

export function decodeEndTxnMarker(value: Buffer | null): EndTxnMarker {
  if (value === null || value.length < END_TXN_MARKER_BYTES) {
    throw new DecodeError('truncated', 'transaction marker value shorter than 6 bytes');
  }
  const version = value.readInt16BE(0);
  if (version < 0) throw new DecodeError('unsupported-version', `transaction marker version ${version}`);
  return { version, coordinatorEpoch: value.readInt32BE(2) };
}

export function isTxnMarkerType(
  type: number,
): type is typeof ControlRecordType.Abort | typeof ControlRecordType.Commit {
  return type === ControlRecordType.Abort || type === ControlRecordType.Commit;
}
