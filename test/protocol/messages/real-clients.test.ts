// Real clients against the codecs alone: kcat (librdkafka) and kafka-python connect to a tiny listener that decodes every
// request with the registry and answers ApiVersions and Metadata with the generated encoders. kcat printing
// the metadata we sent proves librdkafka reads our responses; the decoded requests prove we read its bytes.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  decodeRequestHeader,
  encodeResponseHeader,
  type RequestHeader,
} from '../../../src/protocol/headers.js';
import type { ApiVersionsRequest } from '../../../src/protocol/messages/18-api-versions.js';
import { Reader, Writer } from '../../../src/protocol/primitives/index.js';
import { ApiKey, getApi } from '../../../src/protocol/registry.js';
import { FrameSplitter } from '../../helpers/frame-splitter.js';

const TOPIC_ID = Buffer.from('00112233445566778899aabbccddeeff', 'hex').toString('base64url');

interface Seen {
  readonly header: RequestHeader;
  readonly body: unknown;
}

function metadataResponse(port: number): unknown {
  return {
    throttleTimeMs: 0,
    brokers: [{ nodeId: 1, host: '127.0.0.1', port, rack: null }],
    clusterId: 'brook-codec-test',
    controllerId: 1,
    topics: [
      {
        errorCode: 0,
        name: 'orders',
        topicId: TOPIC_ID,
        isInternal: false,
        partitions: [0, 1].map((partitionIndex) => ({
          errorCode: 0,
          partitionIndex,
          leaderId: 1,
          leaderEpoch: 0,
          replicaNodes: [1],
          isrNodes: [1],
          offlineReplicas: [],
        })),
        topicAuthorizedOperations: -2147483648,
      },
    ],
    clusterAuthorizedOperations: -2147483648,
  };
}

function apiVersionsResponse(): unknown {
  const served = [ApiKey.API_VERSIONS, ApiKey.METADATA].map((key) => getApi(key));
  return {
    errorCode: 0,
    apiKeys: served.map((api) => ({
      apiKey: api.apiKey,
      minVersion: api.minVersion,
      maxVersion: api.maxVersion,
    })),
    throttleTimeMs: 0,
    supportedFeatures: [],
    finalizedFeaturesEpoch: -1n,
    finalizedFeatures: [],
    zkMigrationReady: false,
  };
}

/** Answers one framed request; anything but ApiVersions and Metadata closes the connection. */
function answer(socket: Socket, frame: Buffer, port: number, seen: Seen[]): void {
  const r = new Reader(frame);
  const { header } = decodeRequestHeader(r);
  const api = getApi(header.requestApiKey);
  const version = header.requestApiVersion;
  const body = api.decodeRequest(r, version);
  seen.push({ header, body });
  let response: unknown;
  if (api.apiKey === ApiKey.API_VERSIONS) response = apiVersionsResponse();
  else if (api.apiKey === ApiKey.METADATA) response = metadataResponse(port);
  else {
    socket.destroy();
    return;
  }
  const w = new Writer();
  w.int32(0);
  encodeResponseHeader(w, api.apiKey, version, header.correlationId);
  api.encodeResponse(w, version, response);
  const out = w.toBuffer();
  out.writeInt32BE(out.length - 4, 0);
  socket.write(out);
}

function listen(seen: Seen[]): Promise<Server> {
  const server = createServer((socket) => {
    const fromClient = new FrameSplitter({ sizePrefix: 'strip' });
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      fromClient.push(chunk);
      for (const frame of fromClient.frames()) {
        answer(socket, frame, (server.address() as { port: number }).port, seen);
      }
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function runClient(
  command: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('kcat (librdkafka) and kafka-python against the generated codecs', () => {
  const seen: Seen[] = [];
  let server: Server;
  before(async () => {
    server = await listen(seen);
  });
  after(() => {
    server.close();
  });

  it('reads the metadata we encode and sends requests we decode', async () => {
    const { port } = server.address() as { port: number };
    const result = await runClient('kcat', ['-b', `127.0.0.1:${port}`, '-L', '-J', '-m', '10']);
    assert.equal(result.code, 0, result.stderr);
    const metadata = JSON.parse(result.stdout) as {
      brokers: { id: number; name: string }[];
      topics: { topic: string; partitions: { partition: number; leader: number }[] }[];
    };
    assert.deepEqual(metadata.brokers, [{ id: 1, name: `127.0.0.1:${port}` }]);
    assert.equal(metadata.topics[0]!.topic, 'orders');
    assert.deepEqual(
      metadata.topics[0]!.partitions.map((p) => [p.partition, p.leader]),
      [
        [0, 1],
        [1, 1],
      ],
    );

    const apiVersions = seen.find((s) => s.header.requestApiKey === ApiKey.API_VERSIONS)!;
    assert.ok(apiVersions.header.requestApiVersion >= 3, 'librdkafka 2 sends a flexible ApiVersions');
    assert.equal((apiVersions.body as ApiVersionsRequest).clientSoftwareName, 'librdkafka');
    const metadataRequests = seen.filter((s) => s.header.requestApiKey === ApiKey.METADATA);
    assert.ok(metadataRequests.length > 0);
    assert.ok(metadataRequests.every((s) => s.header.clientId === 'rdkafka'));
  });

  it('kafka-python lists the topics from the metadata we encode', async () => {
    seen.length = 0;
    const { port } = server.address() as { port: number };
    const script = [
      'from kafka import KafkaConsumer',
      `c = KafkaConsumer(bootstrap_servers='127.0.0.1:${port}', client_id='kafka-python-test')`,
      'print(sorted(c.topics()))',
      'print(sorted(c.partitions_for_topic("orders")))',
      'c.close()',
    ].join('\n');
    const result = await runClient('/usr/bin/python3', ['-c', script]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), "['orders']\n[0, 1]");
    assert.ok(seen.some((s) => s.header.requestApiKey === ApiKey.API_VERSIONS));
    assert.ok(seen.some((s) => s.header.requestApiKey === ApiKey.METADATA));
    assert.ok(seen.every((s) => s.header.clientId === 'kafka-python-test'));
  });
});
