import assert from 'node:assert/strict';
import net from 'node:net';
import { after, test } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import { registerBroker } from '../../src/controller/broker-registration.js';
import type { Controller } from '../../src/controller/controller.js';
import { ControllerClient } from '../../src/controller/controller-client.js';
import { seededRandom } from '../../src/controller/random.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { decodeRequestHeader, encodeResponseHeader } from '../../src/protocol/headers.js';
import { Reader, Writer } from '../../src/protocol/primitives/index.js';
import { ApiKey, getApi } from '../../src/protocol/registry.js';
import {
  admin,
  newTopic,
  RecordingChannel,
  registration,
  settle,
  startController,
  TestCluster,
} from './helpers.js';

/** A broker's listener that answers AlterPartition and ControlledShutdown through its controller. */
async function controllerListener(controller: () => Controller) {
  const sockets: net.Socket[] = [];
  let requests = 0;
  const server = net.createServer((socket) => {
    sockets.push(socket);
    let buffered = Buffer.alloc(0);
    socket.on('data', async (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 4 && buffered.length >= 4 + buffered.readInt32BE(0)) {
        const size = buffered.readInt32BE(0);
        const r = new Reader(buffered.subarray(4, 4 + size));
        buffered = buffered.subarray(4 + size);
        const { header } = decodeRequestHeader(r);
        const api = getApi(header.requestApiKey);
        const body = api.decodeRequest(r, header.requestApiVersion) as never;
        requests += 1;
        const response =
          header.requestApiKey === ApiKey.ALTER_PARTITION
            ? await controller().alterPartition(body, header.requestApiVersion)
            : await controller().controlledShutdown(body);
        const w = new Writer();
        w.int32(0);
        encodeResponseHeader(w, header.requestApiKey, header.requestApiVersion, header.correlationId);
        api.encodeResponse(w, header.requestApiVersion, response);
        const frame = w.toBuffer();
        frame.writeInt32BE(frame.length - 4, 0);
        socket.write(frame);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    requests: () => requests,
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

test('a broker reaches the controller over the wire, or directly when it is the controller, and follows a failover', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const controllers = new Map<number, Controller>();
  const listeners = [];
  const sessions = new Map<number, ReturnType<TestCluster['store']['openSession']>>();
  for (const id of [1, 2]) {
    const listener = await controllerListener(() => controllers.get(id)!);
    after(() => listener.close());
    listeners.push(listener);
    const session = cluster.store.openSession();
    const base = registration(id);
    assert.ok(
      (
        await registerBroker(
          session,
          { ...base, endpoints: [{ ...base.endpoints[0]!, port: listener.port }] },
          seededRandom(id),
        )
      ).ok,
    );
    sessions.set(id, session);
    const controller = startController(session, id, new RecordingChannel());
    controllers.set(id, controller);
    await controller.start();
  }
  assert.equal(controllers.get(1)!.isActive, true);
  await admin(sessions.get(1)!, controllers.get(1)!).createTopics(
    [newTopic('t', -1, -1, [{ partitionIndex: 0, brokerIds: [2, 1] }])],
    false,
  );
  const client2 = new ControllerClient({
    brokerId: 2 as BrokerId,
    store: sessions.get(2)!,
    local: controllers.get(2)!,
    listenerName: null,
    requestTimeoutMs: 5000,
  });
  after(() => client2.close());
  const topicId = controllers.get(1)!.context!.topics.get('t')!.topicId;
  const shrink = (isr: number[], leaderEpoch: number, partitionEpoch: number) => ({
    brokerId: 2,
    brokerEpoch: -1n,
    topics: [
      {
        topicName: '',
        topicId,
        partitions: [
          {
            partitionIndex: 0,
            leaderEpoch,
            newIsr: isr,
            newIsrWithEpochs: isr.map((brokerId) => ({ brokerId, brokerEpoch: -1n })),
            leaderRecoveryState: 0,
            partitionEpoch,
          },
        ],
      },
    ],
  });
  const remote = await client2.alterPartition(shrink([2], 0, 0));
  assert.equal(remote.errorCode, ErrorCode.NONE);
  assert.equal(remote.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  assert.deepEqual((await cluster.partitionState('t', 0))?.isr, [2]);
  assert.equal(listeners[0]!.requests(), 1, 'sent to broker 1, the controller');

  // Broker 1 dies; broker 2 becomes the controller and its client calls it directly.
  cluster.store.expireSession(sessions.get(1)!.sessionId);
  await settle(controllers.get(2)!);
  assert.equal(controllers.get(2)!.isActive, true);
  const state = await cluster.partitionState('t', 0);
  const local = await client2.alterPartition(shrink([2], state!.leaderEpoch, state!.version));
  assert.equal(local.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE, 'idempotent: already [2]');
  assert.equal(listeners[1]!.requests(), 0, 'no wire request to itself');
  const shutdown = await client2.controlledShutdown({ brokerId: 2, brokerEpoch: -1n });
  assert.equal(shutdown.errorCode, ErrorCode.NONE);
  await controllers.get(2)!.stop();
});
