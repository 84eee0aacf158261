// A TCP proxy in front of one broker process that records the client id of every request passing through it (the
// request header's client_id), by API key: what a broker sees of who is calling, for tests of the client ids that
// a program gives its clients. The broker advertises the proxy, so clients that bootstrap through it stay behind
// it. Frames pass unchanged both ways.

import net from 'node:net';
import { decodeRequestHeader } from '../../src/protocol/headers.js';
import { Reader } from '../../src/protocol/primitives/index.js';
import { type BrokerProcess, startBroker } from './broker-process.js';
import { FrameSplitter } from './frame-splitter.js';

export interface ClientIdProxy {
  readonly broker: BrokerProcess;
  /** The proxy's address, which the broker advertises: bootstrap clients here. */
  readonly bootstrap: string;
  /** The client ids seen on requests of `apiKey` (any API when omitted). */
  clientIds(apiKey?: number): Set<string>;
  /** Closes the proxy's connections and stops the broker. */
  stop(): Promise<void>;
}

export async function startBrokerBehindClientIdProxy(
  overrides: Record<string, string | number | boolean> = {},
): Promise<ClientIdProxy> {
  let upstreamPort = 0;
  const seen: Array<{ apiKey: number; clientId: string }> = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(upstreamPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    upstream.pipe(client);
    const requests = new FrameSplitter({ sizePrefix: 'keep' });
    client.on('data', (chunk: Buffer) => {
      requests.push(chunk);
      for (const frame of requests.frames()) {
        const { header } = decodeRequestHeader(new Reader(frame.subarray(4)));
        seen.push({ apiKey: header.requestApiKey, clientId: header.clientId ?? '' });
        upstream.write(frame);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const proxyPort = (server.address() as net.AddressInfo).port;
  let broker: BrokerProcess;
  try {
    broker = await startBroker({
      overrides: { 'advertised.listeners': `PLAINTEXT://127.0.0.1:${proxyPort}`, ...overrides },
    });
  } catch (err) {
    server.close();
    throw err;
  }
  upstreamPort = broker.port;
  return {
    broker,
    bootstrap: `127.0.0.1:${proxyPort}`,
    clientIds(apiKey?: number): Set<string> {
      return new Set(seen.filter((s) => apiKey === undefined || s.apiKey === apiKey).map((s) => s.clientId));
    },
    async stop(): Promise<void> {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
      await broker.stop();
    },
  };
}
