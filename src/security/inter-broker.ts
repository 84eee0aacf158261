// How this broker connects to other brokers (replica fetchers, controller requests, AlterPartition, transaction
// markers, controlled shutdown): over their inter-broker listener (inter.broker.listener.name or
// security.inter.broker.protocol), with that listener's TLS settings and, on SASL listeners, the mechanism of
// sasl.mechanism.inter.broker.protocol and the broker's own credentials from the listener's JAAS entry for that
// mechanism, as Kafka reads them:
//
//   PLAIN             PlainLoginModule required username="broker" password="..." user_broker="..." ...;
//   SCRAM-SHA-256/512 ScramLoginModule required username="broker" password="...";
//   OAUTHBEARER       OAuthBearerLoginModule required clientId=".." clientSecret=".."; with
//                     sasl.oauthbearer.token.endpoint.url, or Kafka's unsecured login options
//
// The principal other brokers see is then `User:<username>` (or the token's sub), which an authorizer must allow
// CLUSTER_ACTION (super.users), as in Kafka.

import type { ConnectionOptions } from 'node:tls';
import type { BrokerConfig } from '../broker/config/broker-config.js';
import { listenerValue } from '../broker/config/broker-config.js';
import { ConfigError } from '../broker/config/config-error.js';
import { Password } from '../broker/config/config-types.js';
import { tokenProviderFromJaas } from '../client/oauth-token.js';
import type { SaslOptions } from '../client/options.js';
import { usesSasl, usesTls } from '../network/security.js';
import { parseJaasConfig } from './sasl/jaas.js';
import { isSupportedMechanism } from './sasl/mechanism.js';
import { listenerTlsClientOptions } from './tls-listener.js';

export interface InterBrokerSecurity {
  /** TLS client options, or null on a listener without TLS. */
  readonly tls: ConnectionOptions | null;
  /** The broker's SASL login, or null on a listener without SASL. */
  readonly sasl: SaslOptions | null;
}

export const PLAINTEXT_INTER_BROKER: InterBrokerSecurity = { tls: null, sasl: null };

function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return value instanceof Password ? value.value : String(value);
}

function brokerLogin(config: BrokerConfig, listenerName: string, mechanisms: readonly string[]): SaslOptions {
  const mechanism = config.values.string('sasl.mechanism.inter.broker.protocol');
  const mechanismKey = 'sasl.mechanism.inter.broker.protocol';
  if (!isSupportedMechanism(mechanism)) {
    throw new ConfigError(
      mechanismKey,
      mechanism,
      'brokers authenticate to each other with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER',
    );
  }
  if (!mechanisms.includes(mechanism)) {
    throw new ConfigError(
      mechanismKey,
      mechanism,
      `${mechanismKey} must be included in sasl.enabled.mechanisms of listener ${listenerName} when SASL is used for inter-broker communication`,
    );
  }
  const lower = mechanism.toLowerCase();
  const jaasKey = `listener.name.${listenerName.toLowerCase()}.${lower}.sasl.jaas.config`;
  const jaas = text(listenerValue(config, listenerName, 'sasl.jaas.config', lower));
  if (jaas === null)
    throw ConfigError.rule(jaasKey, `${jaasKey} must hold the broker's own ${mechanism} login`);
  let options: ReadonlyMap<string, string>;
  try {
    options = (parseJaasConfig(jaas)[0] as { options: ReadonlyMap<string, string> }).options;
  } catch (err) {
    throw new ConfigError(jaasKey, '[hidden]', (err as Error).message);
  }
  if (mechanism === 'OAUTHBEARER') {
    const endpoint = text(listenerValue(config, listenerName, 'sasl.oauthbearer.token.endpoint.url', lower));
    try {
      return { mechanism: 'oauthbearer', token: tokenProviderFromJaas(options, endpoint) };
    } catch (err) {
      throw new ConfigError(jaasKey, '[hidden]', (err as Error).message);
    }
  }
  const username = options.get('username');
  const password = options.get('password');
  if (username === undefined || password === undefined) {
    throw ConfigError.rule(
      jaasKey,
      `${jaasKey} must set username and password: the broker's own login for inter-broker connections`,
    );
  }
  return { mechanism: lower as 'plain' | 'scram-sha-256' | 'scram-sha-512', username, password };
}

/** Reads and checks the inter-broker client settings; throws ConfigError naming the key at fault. */
export function interBrokerSecurity(config: BrokerConfig): InterBrokerSecurity {
  const listenerName = config.interBrokerListenerName;
  const protocol = config.interBrokerSecurityProtocol;
  if (!usesTls(protocol) && !usesSasl(protocol)) return PLAINTEXT_INTER_BROKER;
  const tls = usesTls(protocol) ? listenerTlsClientOptions(config.values, listenerName) : null;
  const mechanisms = usesSasl(protocol)
    ? (listenerValue(config, listenerName, 'sasl.enabled.mechanisms') as string[])
    : [];
  const sasl = usesSasl(protocol) ? brokerLogin(config, listenerName, mechanisms) : null;
  return { tls, sasl };
}
