// Decodes PostgreSQL's pgoutput logical replication messages (protocol version 1), as
// pg_logical_slot_peek_binary_changes returns them: Begin, Commit, Relation, Insert, Update, Delete and
// Truncate; Origin and Type messages are skipped. Column values are PostgreSQL's text form (null, or
// "unchanged TOAST" for a large value an update did not touch).

import { DataException } from '../../errors.js';

export interface RelationColumn {
  name: string;
  typeOid: number;
  typeModifier: number;
  isKey: boolean;
}

export interface Relation {
  id: number;
  namespace: string;
  name: string;
  columns: RelationColumn[];
}

/** A column value: text, null, or undefined for an unchanged TOASTed value. */
export type TupleValue = string | null | undefined;

export type PgOutputMessage =
  | { tag: 'begin'; finalLsn: bigint; commitTimeUs: bigint; xid: number }
  | { tag: 'commit'; commitLsn: bigint; endLsn: bigint; commitTimeUs: bigint }
  | { tag: 'relation'; relation: Relation }
  | { tag: 'insert'; relationId: number; newTuple: TupleValue[] }
  | { tag: 'update'; relationId: number; oldTuple: TupleValue[] | null; newTuple: TupleValue[] }
  | { tag: 'delete'; relationId: number; oldTuple: TupleValue[] }
  | { tag: 'truncate'; relationIds: number[] }
  | { tag: 'other' };

class Reader {
  pos = 0;
  constructor(private readonly b: Buffer) {}
  u8(): number {
    return this.b.readUInt8(this.pos++);
  }
  i16(): number {
    const v = this.b.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  i32(): number {
    const v = this.b.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  u64(): bigint {
    const v = this.b.readBigUInt64BE(this.pos);
    this.pos += 8;
    return v;
  }
  i64(): bigint {
    const v = this.b.readBigInt64BE(this.pos);
    this.pos += 8;
    return v;
  }
  cstring(): string {
    const end = this.b.indexOf(0, this.pos);
    if (end < 0) throw new DataException('pgoutput: unterminated string');
    const s = this.b.toString('utf8', this.pos, end);
    this.pos = end + 1;
    return s;
  }
  bytes(n: number): Buffer {
    const v = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
}

function tuple(r: Reader): TupleValue[] {
  const n = r.i16();
  const out: TupleValue[] = [];
  for (let i = 0; i < n; i++) {
    const kind = String.fromCharCode(r.u8());
    if (kind === 'n') out.push(null);
    else if (kind === 'u') out.push(undefined);
    else if (kind === 't') out.push(r.bytes(r.i32()).toString('utf8'));
    else throw new DataException(`pgoutput: unknown tuple value kind '${kind}'`);
  }
  return out;
}

export function decodePgOutput(data: Buffer): PgOutputMessage {
  const r = new Reader(data);
  const tag = String.fromCharCode(r.u8());
  switch (tag) {
    case 'B':
      return { tag: 'begin', finalLsn: r.u64(), commitTimeUs: r.i64(), xid: r.i32() };
    case 'C': {
      r.u8();
      return { tag: 'commit', commitLsn: r.u64(), endLsn: r.u64(), commitTimeUs: r.i64() };
    }
    case 'R': {
      const id = r.i32();
      const namespace = r.cstring();
      const name = r.cstring();
      r.u8(); // replica identity setting
      const n = r.i16();
      const columns: RelationColumn[] = [];
      for (let i = 0; i < n; i++) {
        const flags = r.u8();
        columns.push({
          isKey: (flags & 1) === 1,
          name: r.cstring(),
          typeOid: r.i32(),
          typeModifier: r.i32(),
        });
      }
      return { tag: 'relation', relation: { id, namespace, name, columns } };
    }
    case 'I': {
      const relationId = r.i32();
      r.u8(); // 'N'
      return { tag: 'insert', relationId, newTuple: tuple(r) };
    }
    case 'U': {
      const relationId = r.i32();
      let kind = String.fromCharCode(r.u8());
      let oldTuple: TupleValue[] | null = null;
      if (kind === 'K' || kind === 'O') {
        oldTuple = tuple(r);
        kind = String.fromCharCode(r.u8());
      }
      return { tag: 'update', relationId, oldTuple, newTuple: tuple(r) };
    }
    case 'D': {
      const relationId = r.i32();
      r.u8(); // 'K' or 'O'
      return { tag: 'delete', relationId, oldTuple: tuple(r) };
    }
    case 'T': {
      const n = r.i32();
      r.u8();
      const relationIds: number[] = [];
      for (let i = 0; i < n; i++) relationIds.push(r.i32());
      return { tag: 'truncate', relationIds };
    }
    default:
      return { tag: 'other' };
  }
}

/** "16/B374D848" <-> a 64-bit position. */
export function parseLsn(text: string): bigint {
  const m = /^([0-9A-Fa-f]+)\/([0-9A-Fa-f]+)$/.exec(text.trim());
  if (m === null) throw new DataException(`Not an LSN: ${text}`);
  return (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`);
}

export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}
