// What the broker holds when `brook.metrics.listener` is set: the metrics (counters the hot path bumps, gauges
// read at scrape time) and the HTTP listener serving them with /healthz and /readyz.
//
// Lifecycle: created and started first in Broker.start() (so /healthz answers and /readyz says why not while the
// logs recover), given the broker's services by attach() once they exist, stopped last in Broker.stop().

import type { Logger } from '../common/logger.js';
import { BrokerMetrics, type MetricsSources } from './broker-metrics.js';
import type { MetricsListener } from './metrics-listener.js';
import { MetricsServer } from './metrics-server.js';
import { checkReadiness, type ReadinessProbe } from './readiness.js';

export class MetricsEndpoint {
  readonly metrics = new BrokerMetrics();
  private readonly server: MetricsServer;

  constructor(listener: MetricsListener, probe: () => ReadinessProbe, logger: Logger) {
    this.server = new MetricsServer(
      listener,
      {
        scrape: async () => ({ body: await this.metrics.scrape(), contentType: this.metrics.contentType }),
        readiness: () => checkReadiness(probe()),
      },
      logger,
    );
  }

  /** Binds the listener; answers with the address bound. */
  start(): Promise<MetricsListener> {
    return this.server.start();
  }

  attach(sources: MetricsSources): void {
    this.metrics.attach(sources);
  }

  stop(): Promise<void> {
    return this.server.stop();
  }
}
