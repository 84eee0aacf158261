// How a broker reaches the active controller (Kafka's BrokerToControllerChannelManager): AlterPartition from
// partition leaders and ControlledShutdown from a stopping broker. The controller is found through /controller
// and its registration; when it is this very broker, the call is direct. An answer of NOT_CONTROLLER, or a
// failed connection, means the controller moved: the client finds it again and retries until the deadline.
//
// Owns: at most one connection, to the controller it last found. Calls are independent; each retries within
// its own deadline.

import type { BrokerId } from '../common/ids.js';
import { type Logger, silentLogger } from '../common/logger.js';
import { ErrorCode } from '../protocol/errors.js';
import type {
  ControlledShutdownRequest,
  ControlledShutdownResponse,
} from '../protocol/messages/07-controlled-shutdown.js';
import type {
  AlterPartitionRequest,
  AlterPartitionResponse,
} from '../protocol/messages/56-alter-partition.js';
import { type ApiDescriptor, ApiKey, getApi } from '../protocol/registry.js';
import type { Controller } from './controller.js';
import type { CoordinationStore } from './store/store.js';
import { BrokerConnection } from './wire-channel.js';
import {
  brokerPath,
  CONTROLLER_PATH,
  decodeBrokerRegistration,
  decodeController,
} from './zk-layout/index.js';

export interface ControllerClientOptions {
  readonly brokerId: BrokerId;
  readonly store: CoordinationStore;
  /** This broker's controller, called directly while it is the active one. */
  readonly local: Controller | null;
  /** The listener the controller is reached on; null takes its first PLAINTEXT endpoint. */
  readonly listenerName: string | null;
  /** Deadline of one call, retries included (Kafka: request.timeout.ms of the controller channel). */
  readonly requestTimeoutMs: number;
  /** Pause between attempts. Default 100 ms. */
  readonly retryBackoffMs?: number;
  readonly logger?: Logger;
}

type Target =
  | { readonly kind: 'local'; readonly controller: Controller }
  | { readonly kind: 'remote'; readonly id: BrokerId; readonly connection: BrokerConnection };

export class ControllerClient {
  private connection: { id: BrokerId; connection: BrokerConnection } | null = null;
  private readonly logger: Logger;
  private closed = false;

  constructor(private readonly options: ControllerClientOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  /** Sends AlterPartition at `version` (the request must be filled for that version). */
  alterPartition(
    request: AlterPartitionRequest,
    version = getApi(ApiKey.ALTER_PARTITION).maxVersion,
  ): Promise<AlterPartitionResponse> {
    const api = getApi(ApiKey.ALTER_PARTITION) as ApiDescriptor<
      AlterPartitionRequest,
      AlterPartitionResponse
    >;
    return this.call((controller) => controller.alterPartition(request, version), api, version, request, {
      throttleTimeMs: 0,
      errorCode: ErrorCode.REQUEST_TIMED_OUT,
      topics: [],
    });
  }

  controlledShutdown(
    request: ControlledShutdownRequest,
    version = getApi(ApiKey.CONTROLLED_SHUTDOWN).maxVersion,
  ): Promise<ControlledShutdownResponse> {
    const api = getApi(ApiKey.CONTROLLED_SHUTDOWN) as ApiDescriptor<
      ControlledShutdownRequest,
      ControlledShutdownResponse
    >;
    return this.call((controller) => controller.controlledShutdown(request), api, version, request, {
      errorCode: ErrorCode.REQUEST_TIMED_OUT,
      remainingPartitions: [],
    });
  }

  close(): void {
    this.closed = true;
    this.connection?.connection.close(new Error('controller client closed'));
    this.connection = null;
  }

  private async call<Req, Res extends { errorCode: number }>(
    local: (controller: Controller) => Promise<Res>,
    api: ApiDescriptor<Req, Res>,
    version: number,
    request: Req,
    timedOut: Res,
  ): Promise<Res> {
    const deadline = Date.now() + this.options.requestTimeoutMs;
    for (let attempt = 1; !this.closed; attempt++) {
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0) break;
      const target = await this.findController();
      try {
        if (target !== null) {
          const response =
            target.kind === 'local'
              ? await local(target.controller)
              : await target.connection.request(
                  api,
                  version,
                  request,
                  `broker-${this.options.brokerId}`,
                  remainingMs,
                );
          if (response.errorCode !== ErrorCode.NOT_CONTROLLER) return response;
          this.dropConnection();
        }
      } catch (e) {
        this.logger.warn(
          `${api.name} to the controller failed (attempt ${attempt}): ${(e as Error).message}`,
        );
        this.dropConnection();
      }
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(this.options.retryBackoffMs ?? 100, Math.max(0, deadline - Date.now()))),
      );
    }
    return timedOut;
  }

  private dropConnection(): void {
    this.connection?.connection.close(new Error('the controller moved'));
    this.connection = null;
  }

  private async findController(): Promise<Target | null> {
    const local = this.options.local;
    if (local?.isActive) return { kind: 'local', controller: local };
    const node = await this.options.store.get(CONTROLLER_PATH);
    if (!node.ok) return null;
    const decoded = decodeController(node.value.data);
    if (!decoded.ok) return null;
    const id = decoded.value.brokerId;
    if (id === this.options.brokerId) return local === null ? null : { kind: 'local', controller: local };
    if (this.connection !== null && this.connection.id === id && !this.connection.connection.isClosed) {
      return { kind: 'remote', id, connection: this.connection.connection };
    }
    this.dropConnection();
    const registration = await this.options.store.get(brokerPath(id));
    if (!registration.ok) return null;
    const broker = decodeBrokerRegistration(id, registration.value.data);
    if (!broker.ok) return null;
    const name = this.options.listenerName;
    const endpoint = broker.value.endpoints.find((e) =>
      name === null ? e.securityProtocol === 'PLAINTEXT' : e.listenerName === name,
    );
    if (endpoint === undefined || endpoint.securityProtocol !== 'PLAINTEXT') return null;
    const connection = new BrokerConnection(
      endpoint.host === '' ? '127.0.0.1' : endpoint.host,
      endpoint.port,
      100 * 1024 * 1024,
      this.logger,
    );
    this.connection = { id, connection };
    return { kind: 'remote', id, connection };
  }
}
