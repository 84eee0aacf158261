// Real Kafka clients over the network layer: kcat (librdkafka) with a handler that knows just enough of
// ApiVersions and Metadata v0 to let it list the cluster. This proves the framing, the header prefix and the
// response order against a client nobody here wrote; the APIs themselves are the broker's.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import type { Request, Response } from '../../src/network/request.js';
import { withServer } from './helpers.js';

const API_VERSIONS = 18;
const METADATA = 3;
const UNSUPPORTED_VERSION = 35;

function responseHeader(correlationId: number): Buffer {
  const header = Buffer.alloc(4);
  header.writeInt32BE(correlationId, 0);
  return header;
}

/** ApiVersions v0 body (error code, then api key ranges), which every client understands. */
function apiVersionsV0(errorCode: number): Buffer {
  const ranges: [number, number, number][] = [
    [METADATA, 0, 0],
    [API_VERSIONS, 0, 0],
  ];
  const body = Buffer.alloc(2 + 4 + ranges.length * 6);
  body.writeInt16BE(errorCode, 0);
  body.writeInt32BE(ranges.length, 2);
  ranges.forEach(([key, min, max], i) => {
    body.writeInt16BE(key, 6 + i * 6);
    body.writeInt16BE(min, 8 + i * 6);
    body.writeInt16BE(max, 10 + i * 6);
  });
  return body;
}

/** Metadata v0 body: one broker (id 1 at the listener's address), no topics. */
function metadataV0(host: string, port: number): Buffer {
  const hostBytes = Buffer.from(host);
  const body = Buffer.alloc(4 + 4 + 2 + hostBytes.length + 4 + 4);
  let at = body.writeInt32BE(1, 0);
  at = body.writeInt32BE(1, at);
  at = body.writeInt16BE(hostBytes.length, at);
  at += hostBytes.copy(body, at);
  at = body.writeInt32BE(port, at);
  body.writeInt32BE(0, at);
  return body;
}

function kcat(args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    execFile('kcat', args, { timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({
        stdout,
        stderr,
        code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1,
      });
    });
  });
}

/**
 * Just enough of a broker for a client to list the cluster: ApiVersions (v0; newer versions get
 * UNSUPPORTED_VERSION in a v0 body, which makes clients retry with v0) and Metadata v0 naming one broker.
 */
function miniBroker(): {
  handler: (request: Request) => Response;
  seen: string[];
  setPort(port: number): void;
} {
  const seen: string[] = [];
  let port = 0;
  const handler = (request: Request): Response => {
    seen.push(`${request.apiKey}v${request.apiVersion}`);
    const header = responseHeader(request.correlationId);
    if (request.apiKey === API_VERSIONS) {
      return [header, apiVersionsV0(request.apiVersion === 0 ? 0 : UNSUPPORTED_VERSION)];
    }
    if (request.apiKey === METADATA && request.apiVersion === 0)
      return [header, metadataV0('127.0.0.1', port)];
    throw new Error(`unexpected request ${request.apiKey} v${request.apiVersion}`);
  };
  return { handler, seen, setPort: (p) => (port = p) };
}

const fixtures = new URL('../../../test/network/fixtures/', import.meta.url);

describe('real clients', () => {
  it('kcat lists the cluster through the network layer', async () => {
    const broker = miniBroker();
    await withServer({ handler: broker.handler }, async (context) => {
      broker.setPort(context.port);
      const result = await kcat(['-b', `127.0.0.1:${context.port}`, '-L', '-m', '10']);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`1 brokers:\\s+broker 1 at 127\\.0\\.0\\.1:${context.port}`));
      assert.ok(
        broker.seen.includes('18v0'),
        `ApiVersions v0 after the fallback; saw ${broker.seen.join(',')}`,
      );
      assert.ok(broker.seen.includes('3v0'), `Metadata v0; saw ${broker.seen.join(',')}`);
      assert.equal(context.server.stats.connectionsClosedMalformed, 0);
    });
  });

  it('kcat lists the cluster over a TLS listener', async () => {
    const broker = miniBroker();
    const tls = {
      key: readFileSync(new URL('localhost-key.pem', fixtures)),
      cert: readFileSync(new URL('localhost-cert.pem', fixtures)),
    };
    await withServer(
      { handler: broker.handler, listener: { name: 'SSL', securityProtocol: 'SSL', tls } },
      async (context) => {
        broker.setPort(context.port);
        const result = await kcat([
          '-b',
          `127.0.0.1:${context.port}`,
          '-X',
          'security.protocol=SSL',
          '-X',
          `ssl.ca.location=${fileURLToPath(new URL('localhost-cert.pem', fixtures))}`,
          '-L',
          '-m',
          '10',
        ]);
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stdout, /1 brokers:/);
        assert.ok(broker.seen.includes('3v0'), `Metadata v0; saw ${broker.seen.join(',')}`);
      },
    );
  });

  it('kafkajs describes the cluster through the network layer', async () => {
    const broker = miniBroker();
    await withServer({ handler: broker.handler }, async (context) => {
      const port = context.port;
      broker.setPort(port);
      const kafka = new Kafka({
        brokers: [`127.0.0.1:${port}`],
        logLevel: logLevel.NOTHING,
        retry: { retries: 0 },
      });
      const admin = kafka.admin();
      try {
        await admin.connect();
        const cluster = await admin.describeCluster();
        assert.deepEqual(cluster.brokers, [{ nodeId: 1, host: '127.0.0.1', port }]);
      } finally {
        await admin.disconnect();
      }
      assert.ok(broker.seen.includes('3v0'), `Metadata v0; saw ${broker.seen.join(',')}`);
    });
  });
});
