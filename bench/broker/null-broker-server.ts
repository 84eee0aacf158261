// The null broker behind L_null, run as its own process (forked by bench/limits/null-broker.ts) so that it and
// the generator each have a core, as the real broker and the generator do. It answers ApiVersions, Metadata
// and Produce with minimal valid responses and does nothing else: no validation, no storage, no CRC. A
// Produce body is decoded with the same codec as the broker's (that much any broker must do to answer
// per partition), and each partition's base offset is a counter advanced by the records of its batches
// (read from the batch headers), so the generator's offset checks hold here too.
//
// Arguments: the partition count Metadata reports for every topic, and optionally `clients`: the clients mode
// (null-broker-clients.ts) that also keeps produced batches in memory and serves Fetch, ListOffsets,
// CreateTopics and a one-member group coordinator, so that real clients can run against it. It reports its port
// over the IPC channel and exits when its parent disconnects, so it cannot outlive a crashed benchmark.
import { createServer, type Socket } from 'node:net';
import { FrameReader } from '../../src/network/frame-reader.js';
import { decodeRequestHeader, encodeResponseHeader } from '../../src/protocol/headers.js';
import { decodeProduceRequest, encodeProduceResponse } from '../../src/protocol/messages/00-produce.js';
import { encodeMetadataResponse, type MetadataRequest } from '../../src/protocol/messages/03-metadata.js';
import { encodeApiVersionsResponse } from '../../src/protocol/messages/18-api-versions.js';
import { Reader, Writer } from '../../src/protocol/primitives/index.js';
import { ApiKey, advertisedVersions, getApi } from '../../src/protocol/registry.js';
import { clientApis, NullClientState } from './null-broker-clients.js';

export type NullBrokerMessage = { type: 'listening'; port: number };

const frameBytesMax = 100 * 1024 * 1024;
const partitionCount = Number(process.argv[2] ?? '1');
const clientsMode = process.argv[3] === 'clients';
/** Next offset by topic and partition. */
const nextOffsets = new Map<string, number[]>();
let port = 0;

/** The APIs it answers, with the version ranges it advertises (those of the codecs, stable ones only). */
const served = [ApiKey.PRODUCE, ApiKey.METADATA, ApiKey.API_VERSIONS, ...(clientsMode ? clientApis : [])].map(
  (apiKey) => advertisedVersions(getApi(apiKey))!,
);
const clientState = clientsMode
  ? new NullClientState(partitionCount, () => ({ host: '127.0.0.1', port }))
  : null;

/** Answers one request; a promise when the answer waits (a long-polling Fetch in clients mode). */
function answer(socket: Socket, frame: Buffer): Promise<void> | undefined {
  const r = new Reader(frame);
  const { header } = decodeRequestHeader(r);
  const version = header.requestApiVersion;
  const w = new Writer();
  switch (header.requestApiKey) {
    case ApiKey.API_VERSIONS:
      encodeResponseHeader(w, ApiKey.API_VERSIONS, version, header.correlationId);
      encodeApiVersionsResponse(w, version, {
        errorCode: 0,
        apiKeys: served,
        throttleTimeMs: 0,
        supportedFeatures: [],
        finalizedFeaturesEpoch: -1n,
        finalizedFeatures: [],
        zkMigrationReady: false,
      });
      break;
    case ApiKey.METADATA: {
      const request = getApi(ApiKey.METADATA).decodeRequest(r, version) as MetadataRequest;
      encodeResponseHeader(w, ApiKey.METADATA, version, header.correlationId);
      encodeMetadataResponse(w, version, metadata(request));
      break;
    }
    case ApiKey.PRODUCE: {
      const request = decodeProduceRequest(r, version);
      if (request.acks === 0) return;
      encodeResponseHeader(w, ApiKey.PRODUCE, version, header.correlationId);
      encodeProduceResponse(w, version, {
        responses: request.topicData.map((topic) => ({
          name: topic.name,
          partitionResponses: topic.partitionData.map((p) => ({
            index: p.index,
            errorCode: 0,
            baseOffset: BigInt(
              clientState === null
                ? advance(topic.name, p.index, p.records)
                : clientState.append(topic.name, p.index, p.records),
            ),
            logAppendTimeMs: -1n,
            logStartOffset: 0n,
            recordErrors: [],
            errorMessage: null,
            currentLeader: { leaderId: -1, leaderEpoch: -1 },
          })),
        })),
        throttleTimeMs: 0,
        nodeEndpoints: [],
      });
      break;
    }
    default:
      if (clientState !== null) return answerLater(socket, header.requestApiKey, version, header, r);
      // Not served: closing is what a broker does with a request it cannot parse.
      socket.destroy();
      return;
  }
  send(socket, w);
}

async function answerLater(
  socket: Socket,
  apiKey: number,
  version: number,
  header: Parameters<NullClientState['respond']>[0],
  r: Reader,
): Promise<void> {
  const body = await clientState!.respond(header, r);
  if (body === null) {
    socket.destroy();
    return;
  }
  const w = new Writer();
  encodeResponseHeader(w, apiKey, version, header.correlationId);
  getApi(apiKey).encodeResponse(w, version, body);
  send(socket, w);
}

function send(socket: Socket, w: Writer): void {
  const chunks = w.chunksOut();
  const prefix = Buffer.allocUnsafe(4);
  prefix.writeInt32BE(w.length, 0);
  socket.cork();
  socket.write(prefix);
  for (const chunk of chunks) socket.write(chunk);
  socket.uncork();
}

function metadata(request: MetadataRequest) {
  const names = (request.topics ?? []).map((t) => t.name ?? '');
  // Clients mode: topics by id (Metadata v10+, Fetch v13+), and an all-topics request lists what was produced.
  if (clientState !== null && request.topics === null) names.push(...clientState.topicNames());
  return {
    throttleTimeMs: 0,
    brokers: [{ nodeId: 0, host: '127.0.0.1', port, rack: null }],
    clusterId: 'null-broker',
    controllerId: 0,
    topics: names.map((name) => ({
      errorCode: 0,
      name,
      topicId: clientState === null ? '' : clientState.topicId(name),
      isInternal: false,
      partitions: Array.from({ length: partitionCount }, (_, partitionIndex) => ({
        errorCode: 0,
        partitionIndex,
        leaderId: 0,
        leaderEpoch: 0,
        replicaNodes: [0],
        isrNodes: [0],
        offlineReplicas: [],
      })),
      topicAuthorizedOperations: -2147483648,
    })),
    clusterAuthorizedOperations: -2147483648,
  };
}

/** Returns the partition's next offset and moves it past the records of `records` (batch headers only). */
function advance(topic: string, partition: number, records: Buffer | null): number {
  let offsets = nextOffsets.get(topic);
  if (offsets === undefined) {
    offsets = [];
    nextOffsets.set(topic, offsets);
  }
  const base = offsets[partition] ?? 0;
  let next = base;
  if (records !== null) {
    for (
      let position = 0;
      position + 61 <= records.length;
      position += 12 + records.readInt32BE(position + 8)
    ) {
      next += records.readInt32BE(position + 23) + 1;
    }
  }
  offsets[partition] = next;
  return base;
}

const server = createServer((socket) => {
  socket.setNoDelay(true);
  const reader = new FrameReader(frameBytesMax);
  // Clients mode: a request that waits (a long-polling Fetch) holds back the ones after it on its connection,
  // so responses leave in request order, as Kafka guarantees per connection.
  const queued: Buffer[] = [];
  let waiting = false;
  const drain = async (): Promise<void> => {
    waiting = true;
    try {
      for (let frame = queued.shift(); frame !== undefined; frame = queued.shift())
        await answer(socket, frame);
    } catch (error) {
      console.error(`null broker: ${(error as Error).message}`);
      socket.destroy();
    }
    waiting = false;
  };
  socket.on('data', (chunk: Buffer) => {
    try {
      reader.push(chunk);
      for (let frame = reader.next(); frame !== null; frame = reader.next()) {
        if (clientState === null) answer(socket, frame);
        else queued.push(frame);
      }
      if (clientState !== null && !waiting && queued.length > 0) void drain();
    } catch (error) {
      console.error(`null broker: ${(error as Error).message}`);
      socket.destroy();
    }
  });
  socket.on('error', () => socket.destroy());
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') {
    port = address.port;
    const message: NullBrokerMessage = { type: 'listening', port };
    process.send?.(message);
  }
});

process.on('disconnect', () => {
  server.close();
  process.exit(0);
});
