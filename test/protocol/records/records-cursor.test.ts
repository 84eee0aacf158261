import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildBatch,
  buildMessageSet,
  listEntries,
  RecordsCursor,
} from '../../../src/protocol/records/index.js';

function blob(): { bytes: Buffer; sizes: number[] } {
  const parts = [
    buildBatch([{ value: 'one' }], { baseOffset: 0 }),
    buildMessageSet([{ offset: 1, value: Buffer.from('legacy') }], { magic: 1 }),
    buildBatch([{ value: 'two' }, { value: 'three' }], { baseOffset: 2 }),
    buildMessageSet([{ offset: 4, value: Buffer.from('v0') }], { magic: 0 }),
  ];
  return { bytes: Buffer.concat(parts), sizes: parts.map((p) => p.length) };
}

describe('RecordsCursor', () => {
  it('walks mixed v2 batches and legacy messages by their framing', () => {
    const { bytes, sizes } = blob();
    const { entries, partialBytes, fault } = listEntries(bytes);
    assert.deepEqual(
      entries.map((e) => [e.magic, e.sizeInBytes]),
      [
        [2, sizes[0]],
        [1, sizes[1]],
        [2, sizes[2]],
        [0, sizes[3]],
      ],
    );
    assert.equal(partialBytes, 0);
    assert.equal(fault, null);
  });

  it('reports a partial tail at every cut point instead of returning it', () => {
    const { bytes, sizes } = blob();
    const ends: number[] = [];
    let total = 0;
    for (const size of sizes) {
      total += size;
      ends.push(total);
    }
    for (let cut = 0; cut <= bytes.length; cut++) {
      const { entries, partialBytes, fault } = listEntries(bytes, 0, cut);
      const complete = ends.filter((e) => e <= cut).length;
      assert.equal(fault, null, `cut ${cut}`);
      assert.equal(entries.length, complete, `cut ${cut}`);
      const consumed = complete === 0 ? 0 : ends[complete - 1]!;
      assert.equal(partialBytes, cut - consumed, `cut ${cut}`);
    }
  });

  it('stops with a fault at impossible framing and returns the entries before it', () => {
    const { bytes, sizes } = blob();
    const bad = Buffer.from(bytes);
    bad.writeInt32BE(3, sizes[0]! + 8); // the legacy message claims 3 bytes
    const cursor = new RecordsCursor(bad);
    assert.equal(cursor.next(), true);
    assert.equal(cursor.bytes().length, sizes[0]);
    assert.equal(cursor.next(), false);
    assert.equal(cursor.fault?.kind, 'length-too-small');
    assert.equal(cursor.fault?.position, sizes[0]);
    assert.equal(cursor.next(), false);

    const badMagic = Buffer.from(bytes);
    badMagic[16] = 9;
    assert.equal(listEntries(badMagic).fault?.kind, 'bad-magic');
  });

  it('walks a range inside a larger buffer', () => {
    const { bytes, sizes } = blob();
    const framed = Buffer.concat([Buffer.from('junk'), bytes, Buffer.from('junk')]);
    const { entries } = listEntries(framed, 4, 4 + bytes.length);
    assert.equal(entries.length, 4);
    assert.equal(entries[1]!.position, 4 + sizes[0]!);
  });
});
