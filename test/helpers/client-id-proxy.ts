// A TCP proxy in front of one broker process that records the client id of every request passing through it (the
// request header's client_id), by API key: what a broker sees of who is calling, for tests of the client ids that
// a program gives its clients. The broker advertises the proxy, so clients that bootstrap through it stay behind
// it. Frames pass unchanged both ways. With `sasl`, the broker also has a SASL_PLAINTEXT listener (PLAIN: alice,
// bob and carol, as acl-broker.ts) that clients starting a SASL handshake reach through the proxy, and the proxy
// records the user each client id logged in as. It also records the isolation level of each Fetch, and can
// black-hole a connection from the first request of a chosen API and client id on (the request and all that follow
// it on that connection are swallowed, as by a broker that stopped answering), to show a client's request timeout.

import net from 'node:net';
import { decodeRequestHeader } from '../../src/protocol/headers.js';
import type { FetchRequest } from '../../src/protocol/messages/01-fetch.js';
import { Reader } from '../../src/protocol/primitives/index.js';
import { ApiKey, getApi } from '../../src/protocol/registry.js';
import { saslOverrides } from './acl-broker.js';
import { type BrokerProcess, startBroker } from './broker-process.js';
import { FrameSplitter } from './frame-splitter.js';
import { freePort } from './zookeeper.js';

export interface ClientIdProxy {
  readonly broker: BrokerProcess;
  /** The proxy's address, which the broker advertises: bootstrap clients here. */
  readonly bootstrap: string;
  /** The client ids seen on requests of `apiKey` (any API when omitted). */
  clientIds(apiKey?: number): Set<string>;
  /** With `sasl`: the PLAIN user each client id authenticated as (SaslAuthenticate), by client id. */
  saslUsers(): Map<string, string>;
  /** The isolation levels (0 read_uncommitted, 1 read_committed) of the Fetch requests of `clientId`. */
  fetchIsolationLevels(clientId: string): Set<number>;
  /** When (Date.now()) each request of `apiKey` from `clientId` reached the proxy, in order. */
  requestTimes(apiKey: number, clientId: string): number[];
  /**
   * Swallows the next request of `apiKey` from `clientId` and everything after it on its connection; resolves
   * with the time it was swallowed. Other connections, later ones of the same client included, pass as before.
   */
  blackHole(apiKey: number, clientId: string): Promise<number>;
  /** Closes the proxy's connections and stops the broker. */
  stop(): Promise<void>;
}

/** The PLAIN user of a SaslAuthenticate request's body (`\0user\0password`), or null. */
function plainUser(r: Reader, apiVersion: number): string | null {
  const bytes = apiVersion >= 2 ? r.compactBytes() : r.bytes();
  const [, user] = bytes.toString('utf8').split('\u0000');
  return user ?? null;
}

export async function startBrokerBehindClientIdProxy(
  overrides: Record<string, string | number | boolean> = {},
  options: { sasl?: boolean } = {},
): Promise<ClientIdProxy> {
  let upstreamPort = 0;
  const seen: Array<{ apiKey: number; clientId: string; atMs: number; isolationLevel?: number }> = [];
  let hole: { apiKey: number; clientId: string; swallowed: (atMs: number) => void } | null = null;
  const users = new Map<string, string>();
  const sockets = new Set<net.Socket>();
  let saslPort = 0;
  const server = net.createServer((client) => {
    let upstream = connectUpstream(upstreamPort);
    // With `sasl`, a connection starts on the PLAINTEXT listener (ApiVersions is answered alike on both) and moves
    // to the SASL_PLAINTEXT one when the client starts a SASL handshake: who logs in and who does not both work.
    let switchable = options.sasl === true;
    let swallowing = false;
    function connectUpstream(port: number): net.Socket {
      const socket = net.connect(port, '127.0.0.1');
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        if (socket === upstream) client.destroy();
      });
      socket.pipe(client, { end: false });
      return socket;
    }
    sockets.add(client);
    client.on('error', () => {});
    client.on('close', () => {
      sockets.delete(client);
      upstream.destroy();
    });
    const requests = new FrameSplitter({ sizePrefix: 'keep' });
    client.on('data', (chunk: Buffer) => {
      requests.push(chunk);
      for (const frame of requests.frames()) {
        const r = new Reader(frame.subarray(4));
        const { header } = decodeRequestHeader(r);
        const clientId = header.clientId ?? '';
        const atMs = Date.now();
        const isolationLevel =
          header.requestApiKey === ApiKey.FETCH
            ? (getApi(ApiKey.FETCH).decodeRequest(r, header.requestApiVersion) as FetchRequest).isolationLevel
            : undefined;
        seen.push({ apiKey: header.requestApiKey, clientId, atMs, isolationLevel });
        const h = hole;
        if (h !== null && h.apiKey === header.requestApiKey && h.clientId === clientId) {
          hole = null;
          swallowing = true;
          h.swallowed(atMs);
        }
        if (swallowing) continue;
        if (switchable && header.requestApiKey === ApiKey.SASL_HANDSHAKE) {
          const plain = upstream;
          upstream = connectUpstream(saslPort);
          plain.unpipe(client);
          plain.destroy();
        }
        if (header.requestApiKey !== ApiKey.API_VERSIONS) switchable = false;
        if (header.requestApiKey === ApiKey.SASL_AUTHENTICATE) {
          const user = plainUser(r, header.requestApiVersion);
          if (user !== null) users.set(header.clientId ?? '', user);
        }
        upstream.write(frame);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const proxyPort = (server.address() as net.AddressInfo).port;
  let broker: BrokerProcess;
  // With SASL both listeners are advertised as the proxy, which picks one for each connection.
  let listeners: Record<string, string> = { 'advertised.listeners': `PLAINTEXT://127.0.0.1:${proxyPort}` };
  let plainPort = 0;
  if (options.sasl === true) {
    plainPort = await freePort();
    saslPort = await freePort();
    const { 'authorizer.class.name': _a, 'super.users': _s, ...sasl } = saslOverrides(plainPort, saslPort);
    listeners = {
      ...sasl,
      'advertised.listeners': `PLAINTEXT://127.0.0.1:${proxyPort},SASL_PLAINTEXT://127.0.0.1:${proxyPort}`,
    };
  }
  try {
    broker = await startBroker({ overrides: { ...listeners, ...overrides } });
  } catch (err) {
    server.close();
    throw err;
  }
  upstreamPort = options.sasl === true ? plainPort : broker.port;
  return {
    broker,
    bootstrap: `127.0.0.1:${proxyPort}`,
    clientIds(apiKey?: number): Set<string> {
      return new Set(seen.filter((s) => apiKey === undefined || s.apiKey === apiKey).map((s) => s.clientId));
    },
    saslUsers(): Map<string, string> {
      return new Map(users);
    },
    fetchIsolationLevels(clientId: string): Set<number> {
      return new Set(
        seen
          .filter((s) => s.clientId === clientId && s.isolationLevel !== undefined)
          .map((s) => s.isolationLevel!),
      );
    },
    requestTimes(apiKey: number, clientId: string): number[] {
      return seen.filter((s) => s.apiKey === apiKey && s.clientId === clientId).map((s) => s.atMs);
    },
    blackHole(apiKey: number, clientId: string): Promise<number> {
      return new Promise((swallowed) => {
        hole = { apiKey, clientId, swallowed };
      });
    },
    async stop(): Promise<void> {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
      await broker.stop();
    },
  };
}
