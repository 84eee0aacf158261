// zookeeper.set.acl, checked at startup as a Kafka broker checks it: secure ACLs give all permissions to the
// identity the session authenticated with, so without one (no SASL login and no TLS client certificate)
// ZooKeeper would refuse every creation with INVALIDACL. Kafka stops with a SecurityException then; Brook stops
// with a config error naming the key and what is missing.

import type tls from 'node:tls';
import { ConfigError } from '../broker/config/config-error.js';
import type { ParsedConfig } from '../broker/config/parsed-config.js';
import type { ZooKeeperSaslLogin } from './zookeeper-sasl.js';

/** Whether nodes get Kafka's secure ACLs; a ConfigError when they should but the session would be anonymous. */
export function zooKeeperSecureAcls(
  values: ParsedConfig,
  tlsOptions: tls.ConnectionOptions | null,
  saslLogin: ZooKeeperSaslLogin | null,
): boolean {
  if (!values.boolean('zookeeper.set.acl')) return false;
  const certificate = tlsOptions !== null && (tlsOptions.cert !== undefined || tlsOptions.pfx !== undefined);
  if (saslLogin === null && !certificate) {
    throw new ConfigError(
      'zookeeper.set.acl',
      'true',
      'secure ACLs need an authenticated ZooKeeper session: a JAAS Client section with DigestLoginModule ' +
        '(-Djava.security.auth.login.config in KAFKA_OPTS) or a TLS client certificate ' +
        '(zookeeper.ssl.client.enable=true with zookeeper.ssl.keystore.location)',
    );
  }
  return true;
}
