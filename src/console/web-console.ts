// The web console as one object: Brook's admin client, a producer made on the first test message, the live
// metrics sampler and the HTTP server, started and stopped together. `brook console` (src/cli/console.ts) builds
// one from its arguments; tests build one directly.

import { Admin } from '../client/admin.js';
import type { ClientOptions } from '../client/options.js';
import { Producer } from '../client/producer.js';
import { consoleApi } from './console-api.js';
import { ConsoleServer } from './console-server.js';
import { LiveMetrics } from './live-metrics.js';

export interface WebConsoleOptions {
  client: ClientOptions;
  host: string;
  port: number;
  /** Brokers' Prometheus endpoints (http://host:port/metrics); none: charts from offsets. */
  metricsUrls?: string[];
  /** Bound of one API call against the cluster (default 15 s). */
  timeoutMs?: number;
  /** Interval of the live charts' points (default 2 s). */
  metricsIntervalMs?: number;
  log?: (line: string) => void;
}

export class WebConsole {
  private readonly admin: Admin;
  private producer: Producer | null = null;
  private readonly metrics: LiveMetrics;
  private readonly server: ConsoleServer;

  constructor(options: WebConsoleOptions) {
    const timeoutMs = options.timeoutMs ?? 15_000;
    // The client's own bounds stay inside the API's deadline, so most failures arrive as the client's error (a
    // refused connection, a timed-out request) rather than as the deadline's bare 504.
    const requestTimeoutMs = Math.max(
      1_000,
      Math.min(options.client.requestTimeoutMs ?? 10_000, timeoutMs - 500),
    );
    const client: ClientOptions = {
      clientId: 'brook-console',
      retries: 2,
      connectionTimeoutMs: Math.min(5_000, requestTimeoutMs),
      ...options.client,
      requestTimeoutMs,
    };
    this.admin = new Admin(client);
    this.metrics = new LiveMetrics({
      admin: this.admin,
      metricsUrls: options.metricsUrls ?? [],
      intervalMs: options.metricsIntervalMs ?? 2_000,
      timeoutMs,
    });
    const bootstrap = client.bootstrapServers;
    const api = consoleApi({
      admin: this.admin,
      clientOptions: client,
      producer: () => {
        this.producer ??= new Producer({
          ...client,
          clientId: 'brook-console-producer',
          allowAutoCreateTopics: false,
          lingerMs: 0,
          maxBlockMs: requestTimeoutMs,
          deliveryTimeoutMs: requestTimeoutMs * 2,
        });
        return this.producer;
      },
      metrics: this.metrics,
      timeoutMs,
      bootstrapServers: Array.isArray(bootstrap) ? bootstrap.join(',') : bootstrap,
    });
    this.server = new ConsoleServer(api, options.log ?? ((line) => process.stderr.write(`${line}\n`)));
    this.host = options.host;
    this.port = options.port;
  }

  private readonly host: string;
  private readonly port: number;

  start(): Promise<{ host: string; port: number }> {
    return this.server.start(this.host, this.port);
  }

  async stop(): Promise<void> {
    this.metrics.stop();
    await this.server.stop();
    await this.producer?.close(1_000).catch(() => {});
    await this.admin.close().catch(() => {});
  }
}
