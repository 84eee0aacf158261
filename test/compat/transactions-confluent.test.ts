import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';

// Debian's python3-confluent-kafka is importable only from the system interpreter.
const PYTHON = '/usr/bin/python3';
const SCRIPT = resolve(import.meta.dirname, '../../../test/compat/scripts/confluent_txn.py');
const LARGE_ABORT = resolve(import.meta.dirname, '../../../test/compat/scripts/confluent_txn_large_abort.py');

describe('transactions through confluent-kafka-python (librdkafka)', () => {
  let broker: BrokerProcess;
  before(async () => {
    broker = await startBroker();
  });
  after(async () => {
    await broker?.stop();
  });

  it('commits, aborts, commits offsets in a transaction, fences a zombie producer', async () => {
    const r = await run(PYTHON, [SCRIPT, broker.bootstrap, 'ctx'], { timeoutMs: 150_000 });
    assert.equal(r.code, 0, `script failed:\n${r.stdout}\n${r.stderr}\n--- broker log ---\n${broker.log()}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    const committed = [
      ...Array.from({ length: 10 }, (_, i) => `committed-${i}`),
      'committed-last',
      'committed-second',
    ].sort();
    assert.deepEqual(out.committed, committed, 'read_committed sees only committed records');
    const aborted = Array.from({ length: 6 }, (_, i) => `aborted-${i}`);
    assert.deepEqual(out.uncommitted, [...committed, ...aborted].sort(), 'read_uncommitted sees both');
    assert.equal(out.group_offset, 5, 'the transaction committed the group offset');
    assert.ok(out.fenced !== null, 'the first producer is fenced');
  });

  it('hides an aborted transaction larger than one fetch from read_committed (abort indexed segments later)', async () => {
    const r = await run(PYTHON, [LARGE_ABORT, broker.bootstrap, 'large', '1000', '2500'], {
      timeoutMs: 150_000,
    });
    assert.equal(r.code, 0, `script failed:\n${r.stdout}\n${r.stderr}\n--- broker log ---\n${broker.log()}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    const aborted = out.values.filter((v: string) => v.startsWith('aborted-'));
    assert.equal(aborted.length, 0, `read_committed received ${aborted.length} aborted records`);
    assert.deepEqual(
      out.values,
      Array.from({ length: 10 }, (_, i) => `committed-${i}`).sort(),
      'exactly the committed records',
    );
  });
});
