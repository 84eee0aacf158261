// What the console a broker serves (brook.console.listener) connects with: the broker's inter-broker listener
// and the broker's own inter-broker client settings (TLS options from the listener's ssl.* keys, the SASL login
// of sasl.mechanism.inter.broker.protocol from the listener's JAAS entry), the connection the broker itself is
// sure to be allowed: its principal is the one other brokers see, a super user under an authorizer, as in Kafka.
// A broker whose only listeners are SSL, SASL_SSL or SASL_PLAINTEXT serves a working console this way.

import type { ClientOptions } from '../client/options.js';
import type { InterBrokerSecurity } from '../security/inter-broker.js';

/** A listener the broker bound: its name, the host it was given ('' or a wildcard for every interface), its port. */
export interface ConsoleListener {
  readonly name: string;
  readonly host: string;
  readonly port: number;
}

/** host:port a client on this machine reaches `listener` at: a wildcard bind is reached on loopback. */
export function reachableAddress(listener: ConsoleListener): string {
  const { host } = listener;
  const reachable =
    host === '' || host === '0.0.0.0'
      ? '127.0.0.1'
      : host === '::'
        ? '[::1]'
        : host.includes(':')
          ? `[${host}]`
          : host;
  return `${reachable}:${listener.port}`;
}

/**
 * The client settings of the broker's console: bootstrap on the bound inter-broker listener, with the
 * inter-broker TLS and SASL settings. Throws when that listener is not bound (it always is on a started broker).
 */
export function brokerConsoleClient(
  bound: readonly ConsoleListener[],
  interBrokerListenerName: string,
  security: InterBrokerSecurity,
  clientId: string,
): ClientOptions {
  const listener = bound.find((b) => b.name === interBrokerListenerName);
  if (listener === undefined) {
    throw new Error(
      `brook.console.listener: the inter-broker listener ${interBrokerListenerName} the console speaks to is not bound`,
    );
  }
  const client: ClientOptions = { bootstrapServers: reachableAddress(listener), clientId };
  if (security.tls !== null) client.tls = security.tls;
  if (security.sasl !== null) client.sasl = security.sasl;
  return client;
}
