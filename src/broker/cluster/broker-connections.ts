// One inter-broker connection per other broker, for a job that talks to whichever broker leads something (the
// transaction markers' writer, the produce path's KIP-890 verification): made on first use over the
// inter-broker listener, kept while that broker's endpoint stays the same, and replaced when its registration
// moves to another address (a restart on a new port, a dynamic listener change).
//
// Ownership: the job that made it; close() when that job ends.

import type { BrokerServices } from '../broker-services.js';
import { InterBrokerConnection } from './inter-broker-connection.js';

export class BrokerConnections {
  private readonly byBroker = new Map<number, InterBrokerConnection>();

  /** `clientId` names the job in the other brokers' request logs. */
  constructor(
    private readonly services: BrokerServices,
    private readonly clientId: string,
  ) {}

  /** The connection to `brokerId`, or undefined when it has no endpoint on the inter-broker listener. */
  to(brokerId: number): InterBrokerConnection | undefined {
    const { services } = this;
    const endpoint = services.metadata.endpointFor(brokerId, services.config.interBrokerListenerName);
    if (endpoint === undefined) return undefined;
    let c = this.byBroker.get(brokerId);
    if (c !== undefined && (c.host !== endpoint.host || c.port !== endpoint.port)) {
      c.close();
      c = undefined;
    }
    if (c === undefined) {
      c = new InterBrokerConnection(
        endpoint.host,
        endpoint.port,
        this.clientId,
        services.interBrokerSecurity,
      );
      this.byBroker.set(brokerId, c);
    }
    return c;
  }

  close(): void {
    for (const c of this.byBroker.values()) c.close();
    this.byBroker.clear();
  }
}
