// InitProducerId with a transactional id over the wire, branch by branch of Kafka's isValidProducerId and
// prepareIncrementProducerEpoch / prepareProducerIdRotation (KIP-360): a new id accepts whatever producer id and
// epoch a client sends (librdkafka sends 0/0), the current producer id bumps its epoch, a retry of a bump is
// answered without bumping again, older epochs and other producer ids are fenced, and an exhausted epoch rotates
// the producer id while a retry with the previous id and exhausted epoch still gets the new one.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  TRANSACTION_STATE_TOPIC,
  TxnState,
  transactionRecord,
} from '../../src/coordinator/transaction/transaction-coordinator.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { WireClient } from '../helpers/wire-client.js';

const OVERRIDES = {
  'transaction.state.log.num.partitions': 1,
  'transaction.state.log.replication.factor': 1,
  'transaction.state.log.min.isr': 1,
};

interface Init {
  errorCode: number;
  producerId: bigint;
  producerEpoch: number;
}

describe('InitProducerId with a transactional id and a producer id/epoch (KIP-360)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'brook-init-pid-'));
  let broker: BrokerProcess | undefined;
  let client: WireClient;

  const start = async (): Promise<void> => {
    broker = await startBroker({ dataDir, overrides: OVERRIDES });
    client = await WireClient.connect(broker.host, broker.port);
    await client.call(ApiKey.FIND_COORDINATOR, 3, { key: 'any', keyType: 1, coordinatorKeys: [] });
  };

  /** InitProducerId answered by a loaded coordinator (retried while it is not yet one). */
  const init = (id: string, producerId: bigint, producerEpoch: number, version = 4): Promise<Init> =>
    waitFor(`InitProducerId of ${id}`, async () => {
      const r: Init = await client.call(ApiKey.INIT_PRODUCER_ID, version, {
        transactionalId: id,
        transactionTimeoutMs: 60_000,
        producerId,
        producerEpoch,
      });
      const notYet: number[] = [
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
      ];
      return notYet.includes(r.errorCode) ? undefined : r;
    });

  before(start);
  after(async () => {
    client?.close();
    await broker?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('gives a new transactional id sent with producer id 0 and epoch 0 a producer id at epoch 0', async () => {
    for (const version of [3, 4, 5]) {
      const first = await init(`zero-zero-v${version}`, 0n, 0, version);
      assert.equal(first.errorCode, ErrorCode.NONE, `v${version}`);
      assert.equal(first.producerEpoch, 0);
      assert.ok(first.producerId >= 0n);
    }
    // Any id/epoch is accepted while the id has no producer yet: it is a client recovering its producer.
    const other = await init('unknown-pair', 123_456n, 7);
    assert.deepEqual([other.errorCode, other.producerEpoch], [ErrorCode.NONE, 0]);
    assert.notEqual(other.producerId, 123_456n, 'the coordinator chose the producer id');
  });

  it('bumps the current producer id and epoch, answers its retry without bumping, fences older epochs', async () => {
    const first = await init('current', -1n, -1);
    assert.deepEqual([first.errorCode, first.producerEpoch], [ErrorCode.NONE, 0]);
    const pid = first.producerId;
    const bumped = await init('current', pid, 0);
    assert.deepEqual([bumped.errorCode, bumped.producerId, bumped.producerEpoch], [ErrorCode.NONE, pid, 1]);
    // The answer was lost and the client retries with the epoch it had: the same epoch again, not 2.
    const retry = await init('current', pid, 0);
    assert.deepEqual([retry.errorCode, retry.producerId, retry.producerEpoch], [ErrorCode.NONE, pid, 1]);
    const next = await init('current', pid, 1);
    assert.deepEqual([next.errorCode, next.producerEpoch], [ErrorCode.NONE, 2]);
    // Epoch 0 is neither the current (2) nor the last (1) epoch: fenced (INVALID_PRODUCER_EPOCH before v4).
    assert.equal((await init('current', pid, 0)).errorCode, ErrorCode.PRODUCER_FENCED);
    assert.equal((await init('current', pid, 0, 3)).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
  });

  it('fences another producer id, and the previous producer once a new one initialized without an id', async () => {
    const first = await init('fencing', -1n, -1);
    const pid = first.producerId;
    assert.equal((await init('fencing', pid + 1000n, 0)).errorCode, ErrorCode.PRODUCER_FENCED);
    const bumped = await init('fencing', pid, 0);
    assert.equal(bumped.producerEpoch, 1);
    // A new producer (no id) bumps to 2 and keeps no last epoch, so neither 0 nor 1 passes any more.
    const fresh = await init('fencing', -1n, -1);
    assert.deepEqual([fresh.errorCode, fresh.producerId, fresh.producerEpoch], [ErrorCode.NONE, pid, 2]);
    assert.equal((await init('fencing', pid, 1)).errorCode, ErrorCode.PRODUCER_FENCED);
    assert.equal((await init('fencing', pid, 0)).errorCode, ErrorCode.PRODUCER_FENCED);
  });

  it('rotates the producer id at an exhausted epoch; the previous id with that epoch is a retry', async () => {
    // Two ids whose producers reached epoch 32766 (Short.MaxValue - 1), written the way the coordinator writes
    // them; a restart loads them, as a new coordinator would.
    const exhausted = (transactionalId: string, producerId: number) =>
      transactionRecord(
        {
          transactionalId,
          producerId,
          previousProducerId: -1,
          producerEpoch: 32766,
          lastProducerEpoch: -1,
          timeoutMs: 60_000,
          state: TxnState.CompleteCommit,
          partitions: new Set(),
          // Recent: transactional.id.expiration.ms forgets ids idle for longer.
          startMs: Date.now(),
          updateMs: Date.now(),
          busy: false,
          partition: 0,
        },
        TxnState.CompleteCommit,
        new Set(),
      );
    await init('load-first', -1n, -1);
    // Only Kafka's admin client id may write to an internal topic.
    const admin = await WireClient.connect(broker!.host, broker!.port, '__admin_client');
    const produced = await admin.call(ApiKey.PRODUCE, 9, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 5000,
      topicData: [
        {
          name: TRANSACTION_STATE_TOPIC,
          partitionData: [
            {
              index: 0,
              records: buildBatch([
                exhausted('exhausted-with-id', 7_000_001),
                exhausted('exhausted-without-id', 7_000_002),
              ]),
            },
          ],
        },
      ],
    });
    assert.equal(produced.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    admin.close();
    client.close();
    assert.equal(await broker!.stop(), 0);
    await start();

    // With its id and exhausted epoch: a new producer id at epoch 0, the last epoch kept for a retry.
    const rotated = await init('exhausted-with-id', 7_000_001n, 32766);
    assert.equal(rotated.errorCode, ErrorCode.NONE);
    assert.notEqual(rotated.producerId, 7_000_001n);
    assert.equal(rotated.producerEpoch, 0);
    const retry = await init('exhausted-with-id', 7_000_001n, 32766);
    assert.deepEqual(
      [retry.errorCode, retry.producerId, retry.producerEpoch],
      [ErrorCode.NONE, rotated.producerId, 0],
    );
    // The previous id with an epoch that is not exhausted is not a retry of the rotation.
    assert.equal((await init('exhausted-with-id', 7_000_001n, 32765)).errorCode, ErrorCode.PRODUCER_FENCED);

    // Without an id the rotation keeps no last epoch: the old producer's retry is fenced.
    const fresh = await init('exhausted-without-id', -1n, -1);
    assert.deepEqual([fresh.errorCode, fresh.producerEpoch], [ErrorCode.NONE, 0]);
    assert.notEqual(fresh.producerId, 7_000_002n);
    assert.equal(
      (await init('exhausted-without-id', 7_000_002n, 32766)).errorCode,
      ErrorCode.PRODUCER_FENCED,
    );
  });
});
