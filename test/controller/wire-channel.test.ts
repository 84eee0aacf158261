import assert from 'node:assert/strict';
import net from 'node:net';
import { after, test } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import { registerBroker } from '../../src/controller/broker-registration.js';
import { Controller } from '../../src/controller/controller.js';
import { seededRandom } from '../../src/controller/random.js';
import { WireBrokerChannel } from '../../src/controller/wire-channel.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { decodeRequestHeader, encodeResponseHeader } from '../../src/protocol/headers.js';
import { Reader, Writer } from '../../src/protocol/primitives/index.js';
import { ApiKey, getApi } from '../../src/protocol/registry.js';
import { admin, newTopic, registration, TestCluster } from './helpers.js';

interface Received {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly clientId: string | null;
  readonly body: unknown;
}

/** A broker stand-in: decodes each request with the generated codecs and answers success. */
async function fakeBroker(): Promise<{ port: number; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 4 && buffered.length >= 4 + buffered.readInt32BE(0)) {
        const size = buffered.readInt32BE(0);
        const r = new Reader(buffered.subarray(4, 4 + size));
        buffered = buffered.subarray(4 + size);
        const { header } = decodeRequestHeader(r);
        const api = getApi(header.requestApiKey);
        const body = api.decodeRequest(r, header.requestApiVersion);
        received.push({
          apiKey: header.requestApiKey,
          apiVersion: header.requestApiVersion,
          clientId: header.clientId,
          body,
        });
        const response =
          header.requestApiKey === ApiKey.UPDATE_METADATA
            ? { errorCode: ErrorCode.NONE }
            : header.requestApiKey === ApiKey.LEADER_AND_ISR
              ? { errorCode: ErrorCode.NONE, partitionErrors: [], topics: [] }
              : { errorCode: ErrorCode.NONE, partitionErrors: [] };
        const w = new Writer();
        w.int32(0);
        encodeResponseHeader(w, header.requestApiKey, header.requestApiVersion, header.correlationId);
        api.encodeResponse(w, header.requestApiVersion, response);
        const frame = w.toBuffer();
        frame.writeInt32BE(frame.length - 4, 0);
        socket.write(frame);
      }
    });
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    received,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

test('over the wire, brokers receive LeaderAndIsr, UpdateMetadata and StopReplica that decode at the newest versions', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const servers = [await fakeBroker(), await fakeBroker()];
  after(async () => {
    for (const s of servers) await s.close();
  });
  const sessions = [];
  for (const [i, server] of servers.entries()) {
    const session = cluster.store.openSession();
    const base = registration(i + 1);
    const reg = { ...base, endpoints: [{ ...base.endpoints[0]!, port: server.port }] };
    assert.ok((await registerBroker(session, reg, seededRandom(i))).ok);
    sessions.push(session);
  }
  const channel = new WireBrokerChannel({
    controllerId: 1 as BrokerId,
    listenerName: null,
    requestTimeoutMs: 5000,
  });
  after(() => channel.close());
  const controller = new Controller({ brokerId: 1 as BrokerId, store: sessions[0]!, channel });
  await controller.start();
  const topicAdmin = admin(sessions[0]!, controller);
  const [created] = await topicAdmin.createTopics(
    [newTopic('wire', -1, -1, [{ partitionIndex: 0, brokerIds: [2, 1] }])],
    false,
  );
  assert.equal(created!.errorCode, ErrorCode.NONE);
  for (const server of servers) {
    const leaderAndIsr = server.received.filter((r) => r.apiKey === ApiKey.LEADER_AND_ISR);
    assert.ok(leaderAndIsr.length >= 1);
    const last = leaderAndIsr.at(-1)!;
    assert.equal(last.apiVersion, getApi(ApiKey.LEADER_AND_ISR).maxVersion);
    assert.equal(last.clientId, 'controller-1');
    const body = last.body as {
      topicStates: { topicId: string; partitionStates: { leader: number; isr: number[] }[] }[];
    };
    assert.equal(body.topicStates[0]?.topicId, created!.topicId);
    assert.equal(body.topicStates[0]?.partitionStates[0]?.leader, 2);
    assert.deepEqual(body.topicStates[0]?.partitionStates[0]?.isr, [2, 1]);
    assert.ok(server.received.some((r) => r.apiKey === ApiKey.UPDATE_METADATA));
  }
  await topicAdmin.deleteTopics(['wire']);
  for (const server of servers) {
    const stop = server.received.find((r) => r.apiKey === ApiKey.STOP_REPLICA);
    const body = stop?.body as
      | { topicStates: { partitionStates: { deletePartition: boolean; leaderEpoch: number }[] }[] }
      | undefined;
    assert.equal(body?.topicStates[0]?.partitionStates[0]?.deletePartition, true);
    assert.equal(body?.topicStates[0]?.partitionStates[0]?.leaderEpoch, -2);
  }
  assert.equal(controller.context?.topics.has('wire'), false, 'the deletion completed on the answers');
  await controller.stop();
});

test('a request to a broker that does not answer fails after the deadline', async () => {
  const accepted: net.Socket[] = [];
  const silent = net.createServer((socket) => accepted.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  after(() => {
    for (const socket of accepted) socket.destroy();
    silent.close();
  });
  const port = (silent.address() as net.AddressInfo).port;
  const channel = new WireBrokerChannel({
    controllerId: 1 as BrokerId,
    listenerName: null,
    requestTimeoutMs: 200,
  });
  const base = registration(2);
  channel.brokersChanged(
    new Map([[2 as BrokerId, { ...base, endpoints: [{ ...base.endpoints[0]!, port }] }]]),
  );
  const started = Date.now();
  await assert.rejects(
    channel.updateMetadata(2 as BrokerId, {
      controllerId: 1,
      isKRaftController: false,
      type: 0,
      controllerEpoch: 1,
      brokerEpoch: 1n,
      ungroupedPartitionStates: [],
      topicStates: [],
      liveBrokers: [],
    }),
    /timed out/,
  );
  assert.ok(Date.now() - started >= 150);
  await assert.rejects(channel.updateMetadata(3 as BrokerId, {} as never), /no usable endpoint for broker 3/);
  channel.close();
});
