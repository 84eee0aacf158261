// A partition whose log directory failed is answered KAFKA_STORAGE_ERROR, except to a Fetch of v5 or older, as
// Kafka's maybeDownConvertStorageError does: those clients may not know the code (the Java client before 1.0 took
// it for a fatal unknown error) and get NOT_LEADER_OR_FOLLOWER, which they retry after refreshing their metadata.
// The directory fails for real: the partition's active segment loses its descriptor, so the next append fails with
// an I/O error and the broker takes that directory (one of two) offline.

import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrokerServices } from '../../src/broker/broker-services.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { untilValue } from '../helpers/wait.js';
import { createTopic, fetchBody, produceBatch, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'storage-error-versions';

describe('Fetch of a partition in a failed log directory', () => {
  let base = '';
  let broker: InProcessBroker | undefined;
  let client: WireClient | undefined;

  before(async () => {
    base = mkdtempSync(join(tmpdir(), 'brook-fetch-storage-'));
    broker = await startInProcessBroker({ 'log.dirs': `${join(base, 'a')},${join(base, 'b')}` });
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
    rmSync(base, { recursive: true, force: true });
  });

  const fetchError = async (version: number): Promise<number> => {
    const response = await client!.call(ApiKey.FETCH, version, fetchBody(TOPIC, 0, 0));
    return response.responses[0].partitions[0].errorCode;
  };

  it('answers KAFKA_STORAGE_ERROR from v6, NOT_LEADER_OR_FOLLOWER to v5 and older', async () => {
    await createTopic(client!, TOPIC, { numPartitions: 1 });
    assert.equal(
      (await produceBatch(client!, TOPIC, buildBatch([{ value: 'a' }]))).errorCode,
      ErrorCode.NONE,
    );

    const services = (broker!.broker as unknown as { services: BrokerServices }).services;
    const partition = [...services.replicas.all()].find((p) => p.log.topicPartition.topic === TOPIC);
    assert.ok(partition, 'the partition is hosted here');
    closeSync((partition.log.activeSegment as unknown as { fd: number }).fd);
    const failed = await produceBatch(client!, TOPIC, buildBatch([{ value: 'b' }]));
    // Kafka's ReplicaManager answers a KafkaStorageException by its code alone (LogAppendResult.errorMessage null).
    assert.deepEqual([failed.errorCode, failed.errorMessage], [ErrorCode.KAFKA_STORAGE_ERROR, null]);
    await untilValue('the directory to go offline', async () =>
      services.replicas.isOffline(TOPIC, 0) ? true : null,
    );

    for (const version of [6, 11, 12]) {
      assert.equal(await fetchError(version), ErrorCode.KAFKA_STORAGE_ERROR, `Fetch v${version}`);
    }
    for (const version of [0, 4, 5]) {
      assert.equal(await fetchError(version), ErrorCode.NOT_LEADER_OR_FOLLOWER, `Fetch v${version}`);
    }
  });
});
