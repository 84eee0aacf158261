// readPartition reads to the end the caller names: a read started before the records are there (as one started in
// the moment a new leader takes over, before its high watermark has moved) waits for them instead of ending at its
// first empty answer, and a read of an end that never comes returns what it has once its deadline passes.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, onKey, startInProcessBroker } from './in-process-broker.js';
import { waitUntil } from './wait.js';
import { createTopic, produceBatch, readPartition, WireClient } from './wire-client.js';

describe('readPartition', () => {
  let broker: InProcessBroker | undefined;
  let client: WireClient | undefined;
  before(async () => {
    broker = await startInProcessBroker();
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  it('reads until the offset it was told, waiting for records the partition does not have yet', async () => {
    await createTopic(client!, 'later');
    let fetches = 0;
    broker!.interception.set(
      onKey(ApiKey.FETCH, () => {
        fetches++;
        return undefined;
      }),
    );
    const reader = await WireClient.connect(broker!.host, broker!.port);
    try {
      const read = readPartition(reader, 'later', 0, 0, { untilOffset: 3 });
      // The read has had an answer for an empty partition before the records are written. Before the fix that
      // first empty answer ended it with no records.
      await waitUntil(
        () => fetches > 0,
        20_000,
        () => 'the read never fetched',
      );
      const written = await produceBatch(
        client!,
        'later',
        buildBatch([{ value: 'a' }, { value: 'b' }, { value: 'c' }]),
      );
      assert.equal(written.errorCode, ErrorCode.NONE);
      const records = await read;
      assert.deepEqual(
        records.map((r) => r.value?.toString()),
        ['a', 'b', 'c'],
      );
    } finally {
      broker!.interception.clear();
      reader.close();
    }
  });

  it('returns what it has when the offset it was told is not reached by its deadline', async () => {
    await createTopic(client!, 'short');
    assert.equal(
      (await produceBatch(client!, 'short', buildBatch([{ value: 'x' }]))).errorCode,
      ErrorCode.NONE,
    );
    const records = await readPartition(client!, 'short', 0, 0, { untilOffset: 5, timeoutMs: 300 });
    assert.deepEqual(
      records.map((r) => r.value?.toString()),
      ['x'],
    );
  });

  it('without an offset, reads to the high watermark and stops', async () => {
    await createTopic(client!, 'now');
    assert.deepEqual(await readPartition(client!, 'now', 0), []);
    assert.equal(
      (await produceBatch(client!, 'now', buildBatch([{ value: '1' }, { value: '2' }]))).errorCode,
      ErrorCode.NONE,
    );
    assert.deepEqual(
      (await readPartition(client!, 'now', 0)).map((r) => r.value?.toString()),
      ['1', '2'],
    );
  });
});
