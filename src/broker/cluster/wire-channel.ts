// The controller's channel in a cluster: requests to this broker are direct calls (as on a single node), requests
// to other brokers go over the wire to their inter-broker listener, one connection per broker, at the newest
// versions (every Brook broker speaks them). Connections follow the registrations the controller reports.

import { connect } from 'node:net';
import type { BrokerId } from '../../common/ids.js';
import type { BrokerChannel } from '../../controller/channel.js';
import type { ProbeResult } from '../../controller/liveness-probe.js';
import type { BrokerRegistration } from '../../controller/zk-layout/index.js';
import type { LeaderAndIsrRequest, LeaderAndIsrResponse } from '../../protocol/messages/04-leader-and-isr.js';
import type { StopReplicaRequest, StopReplicaResponse } from '../../protocol/messages/05-stop-replica.js';
import type {
  UpdateMetadataRequest,
  UpdateMetadataResponse,
} from '../../protocol/messages/06-update-metadata.js';
import { ApiKey, getApi } from '../../protocol/registry.js';
import type { InterBrokerSecurity } from '../../security/inter-broker.js';
import { InterBrokerConnection } from './inter-broker-connection.js';

/** controller.socket.timeout.ms (Kafka's default). */
const CONTROLLER_REQUEST_TIMEOUT_MS = 30_000;
/** A liveness probe's connection attempt that takes longer is 'unknown' (only a refusal is a hint). */
const PROBE_TIMEOUT_MS = 1000;

export class WireChannel implements BrokerChannel {
  private readonly connections = new Map<number, InterBrokerConnection>();
  private readonly endpoints = new Map<number, { host: string; port: number }>();

  constructor(
    private readonly localBrokerId: number,
    private readonly local: BrokerChannel,
    private readonly interBrokerListener: string,
    private readonly security?: InterBrokerSecurity,
    /** Endpoints of brokers the controller has not reported (the active controller, probed by the others). */
    private readonly knownEndpoint?: (brokerId: BrokerId) => { host: string; port: number } | undefined,
  ) {}

  brokersChanged(brokers: ReadonlyMap<BrokerId, BrokerRegistration>): void {
    for (const [id, registration] of brokers) {
      const endpoint =
        registration.endpoints.find((e) => e.listenerName === this.interBrokerListener) ??
        registration.endpoints[0];
      if (endpoint === undefined) continue;
      const host = endpoint.host === '' ? '127.0.0.1' : endpoint.host;
      const known = this.endpoints.get(id);
      if (known?.host === host && known.port === endpoint.port) continue;
      this.endpoints.set(id, { host, port: endpoint.port });
      this.connections.get(id)?.close();
      this.connections.delete(id);
    }
    for (const id of [...this.endpoints.keys()]) {
      if (brokers.has(id as BrokerId)) continue;
      this.endpoints.delete(id);
      this.connections.get(id)?.close();
      this.connections.delete(id);
    }
  }

  /** A TCP connection to the broker's inter-broker listener, closed at once (see controller/liveness-probe.ts). */
  probe(brokerId: BrokerId): Promise<ProbeResult> {
    const endpoint = this.endpoints.get(brokerId) ?? this.knownEndpoint?.(brokerId);
    if (brokerId === this.localBrokerId || endpoint === undefined) return Promise.resolve('unknown');
    return new Promise((resolve) => {
      const socket = connect({ host: endpoint.host, port: endpoint.port });
      const done = (result: ProbeResult): void => {
        clearTimeout(timer);
        socket.destroy();
        resolve(result);
      };
      const timer = setTimeout(() => done('unknown'), PROBE_TIMEOUT_MS);
      socket.once('connect', () => done('reachable'));
      socket.once('error', (err: NodeJS.ErrnoException) =>
        done(err.code === 'ECONNREFUSED' ? 'refused' : 'unknown'),
      );
    });
  }

  leaderAndIsr(brokerId: BrokerId, request: LeaderAndIsrRequest): Promise<LeaderAndIsrResponse> {
    if (brokerId === this.localBrokerId) return this.local.leaderAndIsr(brokerId, request);
    return this.send(brokerId, ApiKey.LEADER_AND_ISR, request);
  }

  updateMetadata(brokerId: BrokerId, request: UpdateMetadataRequest): Promise<UpdateMetadataResponse> {
    if (brokerId === this.localBrokerId) return this.local.updateMetadata(brokerId, request);
    return this.send(brokerId, ApiKey.UPDATE_METADATA, request);
  }

  stopReplica(brokerId: BrokerId, request: StopReplicaRequest): Promise<StopReplicaResponse> {
    if (brokerId === this.localBrokerId) return this.local.stopReplica(brokerId, request);
    return this.send(brokerId, ApiKey.STOP_REPLICA, request);
  }

  close(): void {
    for (const c of this.connections.values()) c.close();
    this.connections.clear();
  }

  private send<Response>(brokerId: number, apiKey: number, request: unknown): Promise<Response> {
    const connection = this.connectionTo(brokerId);
    if (connection === undefined)
      return Promise.reject(new Error(`no endpoint known for broker ${brokerId}`));
    return connection.request<Response>(
      apiKey,
      getApi(apiKey).maxVersion,
      request,
      CONTROLLER_REQUEST_TIMEOUT_MS,
    );
  }

  private connectionTo(brokerId: number): InterBrokerConnection | undefined {
    let connection = this.connections.get(brokerId);
    if (connection === undefined) {
      const endpoint = this.endpoints.get(brokerId);
      if (endpoint === undefined) return undefined;
      connection = new InterBrokerConnection(
        endpoint.host,
        endpoint.port,
        `broker-${this.localBrokerId}-controller`,
        this.security,
      );
      this.connections.set(brokerId, connection);
    }
    return connection;
  }
}
