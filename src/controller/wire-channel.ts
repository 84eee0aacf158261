// A BrokerChannel over Kafka's wire protocol, for a cluster: the controller's LeaderAndIsr, UpdateMetadata and
// StopReplica go to each broker's inter-broker listener as ordinary Kafka requests, encoded with the generated
// codecs at the newest version (every Brook broker speaks it).
//
// Owns: one connection per broker, opened on first use and dropped when the broker's registration goes or
// changes, or when the connection fails (the next request opens a new one). ChannelSender keeps one request in
// flight per broker; the connection still matches responses by correlation id. Every request has a deadline
// (controller.socket.timeout.ms); a failed or late request rejects, and ChannelSender decides about retrying.
//
// Limits: plaintext listeners only (a TLS or SASL inter-broker listener needs the security module, not here);
// responses larger than responseBytesMax close the connection.

import net from 'node:net';
import type { BrokerId } from '../common/ids.js';
import { type Logger, silentLogger } from '../common/logger.js';
import { decodeResponseHeader, encodeRequestHeader } from '../protocol/headers.js';
import type { LeaderAndIsrRequest, LeaderAndIsrResponse } from '../protocol/messages/04-leader-and-isr.js';
import type { StopReplicaRequest, StopReplicaResponse } from '../protocol/messages/05-stop-replica.js';
import type {
  UpdateMetadataRequest,
  UpdateMetadataResponse,
} from '../protocol/messages/06-update-metadata.js';
import { Reader, Writer } from '../protocol/primitives/index.js';
import { type ApiDescriptor, ApiKey, getApi } from '../protocol/registry.js';
import type { BrokerChannel } from './channel.js';
import type { BrokerEndpoint, BrokerRegistration } from './zk-layout/index.js';

export interface WireChannelOptions {
  /** The controller's broker id, sent as the client id "controller-<id>" (broker logs show who asked). */
  readonly controllerId: BrokerId;
  /** inter.broker.listener.name; null takes each broker's first PLAINTEXT endpoint. */
  readonly listenerName: string | null;
  /** controller.socket.timeout.ms: the deadline of one request, connecting included. */
  readonly requestTimeoutMs: number;
  /** Largest response frame accepted. Default 100 MiB. */
  readonly responseBytesMax?: number;
  readonly logger?: Logger;
}

const DEFAULT_RESPONSE_BYTES_MAX = 100 * 1024 * 1024;

export class WireBrokerChannel implements BrokerChannel {
  private registrations = new Map<BrokerId, BrokerRegistration>();
  private readonly connections = new Map<BrokerId, BrokerConnection>();
  private readonly logger: Logger;
  private closed = false;

  constructor(private readonly options: WireChannelOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  brokersChanged(brokers: ReadonlyMap<BrokerId, BrokerRegistration>): void {
    for (const [id, connection] of this.connections) {
      const now = brokers.get(id);
      const endpoint = now === undefined ? null : this.endpointOf(now);
      if (endpoint === null || endpoint.host !== connection.host || endpoint.port !== connection.port) {
        connection.close(new Error(`broker ${id} is gone or moved`));
        this.connections.delete(id);
      }
    }
    this.registrations = new Map(brokers);
  }

  leaderAndIsr(brokerId: BrokerId, request: LeaderAndIsrRequest): Promise<LeaderAndIsrResponse> {
    return this.call(
      brokerId,
      getApi(ApiKey.LEADER_AND_ISR) as ApiDescriptor<LeaderAndIsrRequest, LeaderAndIsrResponse>,
      request,
    );
  }

  updateMetadata(brokerId: BrokerId, request: UpdateMetadataRequest): Promise<UpdateMetadataResponse> {
    return this.call(
      brokerId,
      getApi(ApiKey.UPDATE_METADATA) as ApiDescriptor<UpdateMetadataRequest, UpdateMetadataResponse>,
      request,
    );
  }

  stopReplica(brokerId: BrokerId, request: StopReplicaRequest): Promise<StopReplicaResponse> {
    return this.call(
      brokerId,
      getApi(ApiKey.STOP_REPLICA) as ApiDescriptor<StopReplicaRequest, StopReplicaResponse>,
      request,
    );
  }

  /** Closes every connection; later calls reject. */
  close(): void {
    this.closed = true;
    for (const c of this.connections.values()) c.close(new Error('channel closed'));
    this.connections.clear();
  }

  private endpointOf(registration: BrokerRegistration): BrokerEndpoint | null {
    const name = this.options.listenerName;
    const endpoint =
      name === null
        ? registration.endpoints.find((e) => e.securityProtocol === 'PLAINTEXT')
        : registration.endpoints.find((e) => e.listenerName === name);
    return endpoint ?? null;
  }

  private async call<Req, Res>(brokerId: BrokerId, api: ApiDescriptor<Req, Res>, request: Req): Promise<Res> {
    if (this.closed) throw new Error('channel closed');
    let connection = this.connections.get(brokerId);
    if (connection === undefined || connection.isClosed) {
      const registration = this.registrations.get(brokerId);
      const endpoint = registration === undefined ? null : this.endpointOf(registration);
      if (endpoint === null) throw new Error(`no usable endpoint for broker ${brokerId}`);
      if (endpoint.securityProtocol !== 'PLAINTEXT') {
        throw new Error(
          `broker ${brokerId}: ${endpoint.securityProtocol} inter-broker listeners are not supported`,
        );
      }
      connection = new BrokerConnection(
        endpoint.host === '' ? '127.0.0.1' : endpoint.host,
        endpoint.port,
        this.options.responseBytesMax ?? DEFAULT_RESPONSE_BYTES_MAX,
        this.logger,
      );
      this.connections.set(brokerId, connection);
    }
    return connection.request(
      api,
      api.maxVersion,
      request,
      `controller-${this.options.controllerId}`,
      this.options.requestTimeoutMs,
    );
  }
}

interface Pending {
  readonly resolve: (body: Buffer) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** One connection to one broker: size-prefixed frames out, responses matched by correlation id. Also used by ControllerClient. */
export class BrokerConnection {
  private readonly socket: net.Socket;
  private readonly pending = new Map<number, Pending>();
  private buffered: Buffer = Buffer.alloc(0);
  private nextCorrelationId = 1;
  private closedWith: Error | null = null;

  constructor(
    readonly host: string,
    readonly port: number,
    private readonly responseBytesMax: number,
    private readonly logger: Logger,
  ) {
    this.socket = net.connect({ host, port });
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
    this.socket.on('error', (e) => this.close(e));
    this.socket.on('close', () => this.close(new Error(`connection to ${host}:${port} closed`)));
  }

  get isClosed(): boolean {
    return this.closedWith !== null;
  }

  async request<Req, Res>(
    api: ApiDescriptor<Req, Res>,
    version: number,
    body: Req,
    clientId: string,
    timeoutMs: number,
  ): Promise<Res> {
    if (this.closedWith !== null) throw this.closedWith;
    const correlationId = this.nextCorrelationId;
    this.nextCorrelationId = (this.nextCorrelationId + 1) & 0x7fffffff;
    const w = new Writer();
    w.int32(0);
    encodeRequestHeader(w, {
      requestApiKey: api.apiKey,
      requestApiVersion: version,
      correlationId,
      clientId,
    });
    api.encodeRequest(w, version, body);
    const frame = w.toBuffer();
    frame.writeInt32BE(frame.length - 4, 0);
    const responseBody = await new Promise<Buffer>((resolve, reject) => {
      // A request past its deadline leaves the connection in an unknown state: close it, as Kafka's network
      // client does, which fails whatever else waits on it; the next request connects again.
      const timer = setTimeout(() => {
        this.close(new Error(`${api.name} to ${this.host}:${this.port} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(correlationId, { resolve, reject, timer });
      this.socket.write(frame);
    });
    const r = new Reader(responseBody);
    decodeResponseHeader(r, api.apiKey, version);
    return api.decodeResponse(r, version);
  }

  close(error: Error): void {
    if (this.closedWith !== null) return;
    this.closedWith = error;
    this.socket.destroy();
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(error);
    }
    this.pending.clear();
  }

  private onData(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    while (this.buffered.length >= 4) {
      const size = this.buffered.readInt32BE(0);
      if (size < 4 || size > this.responseBytesMax) {
        this.logger.warn(`bad response frame size ${size} from ${this.host}:${this.port}`);
        this.close(new Error(`bad response frame size ${size}`));
        return;
      }
      if (this.buffered.length < 4 + size) return;
      const frame = this.buffered.subarray(4, 4 + size);
      this.buffered = this.buffered.subarray(4 + size);
      const correlationId = frame.readInt32BE(0);
      const pending = this.pending.get(correlationId);
      if (pending === undefined) continue; // answered after its deadline
      this.pending.delete(correlationId);
      clearTimeout(pending.timer);
      pending.resolve(Buffer.from(frame));
    }
  }
}
