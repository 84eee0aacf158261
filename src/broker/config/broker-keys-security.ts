// Broker keys of TLS and SASL that the first keys table (broker-keys-server.ts) does not define: inline PEM
// material, TLS protocol and cipher choice, certificate principal mapping and the pre-authentication bound.
// Names, types and defaults are Kafka 3.9's; every one may also be set per listener as
// `listener.name.<listener>.<key>` (see broker-keys.ts).

import { ConfigType as T } from './config-types.js';
import { defineKey as key } from './define-key.js';
import { atLeast } from './validators.js';

export const SECURITY_KEYS = [
  key(
    'ssl.keystore.certificate.chain',
    T.PASSWORD,
    null,
    'high',
    'Certificate chain in PEM, inline; needs ssl.keystore.type=PEM.',
    { updateMode: 'per-broker', support: 'honoured' },
  ),
  key(
    'ssl.keystore.key',
    T.PASSWORD,
    null,
    'high',
    'Private key in PEM, inline; needs ssl.keystore.type=PEM.',
    {
      updateMode: 'per-broker',
      support: 'honoured',
    },
  ),
  key(
    'ssl.truststore.certificates',
    T.PASSWORD,
    null,
    'high',
    'Trusted certificates in PEM, inline; needs ssl.truststore.type=PEM.',
    { updateMode: 'per-broker', support: 'honoured' },
  ),
  key('ssl.protocol', T.STRING, 'TLSv1.3', 'high', 'TLS protocol of the SSL context.', {
    updateMode: 'per-broker',
    support: 'honoured',
  }),
  key('ssl.cipher.suites', T.LIST, '', 'medium', 'Cipher suites accepted; empty accepts the defaults.', {
    updateMode: 'per-broker',
    support: 'honoured',
  }),
  key(
    'ssl.principal.mapping.rules',
    T.STRING,
    'DEFAULT',
    'low',
    'Rules mapping a client certificate distinguished name to a principal name.',
    { support: 'honoured' },
  ),
  key('ssl.keymanager.algorithm', T.STRING, 'SunX509', 'low', 'Java key manager; unused by Node.', {
    updateMode: 'per-broker',
    support: 'no-op',
  }),
  key('ssl.trustmanager.algorithm', T.STRING, 'PKIX', 'low', 'Java trust manager; unused by Node.', {
    updateMode: 'per-broker',
    support: 'no-op',
  }),
  key('ssl.provider', T.STRING, null, 'medium', 'Java security provider; unused by Node.', {
    updateMode: 'per-broker',
    support: 'no-op',
  }),
  key(
    'ssl.secure.random.implementation',
    T.STRING,
    null,
    'low',
    'Java random number generator; unused by Node.',
    { updateMode: 'per-broker', support: 'no-op' },
  ),
  key(
    'sasl.server.max.receive.size',
    T.INT,
    '524288',
    'low',
    'Largest request a connection may send before it has authenticated.',
    { validator: atLeast(1), support: 'honoured' },
  ),

  // Delegation tokens (KIP-48), with Kafka's names and defaults; none can be altered dynamically.
  key(
    'delegation.token.secret.key',
    T.PASSWORD,
    null,
    'medium',
    'Secret that signs and verifies delegation tokens, the same on every broker; unset, delegation ' +
      'tokens are disabled.',
    { support: 'honoured' },
  ),
  key(
    'delegation.token.master.key',
    T.PASSWORD,
    null,
    'medium',
    'Deprecated alias of delegation.token.secret.key, read when that key is unset.',
    { support: 'honoured' },
  ),
  key(
    'delegation.token.max.lifetime.ms',
    T.LONG,
    '604800000',
    'medium',
    'Longest lifetime of a delegation token; it cannot be renewed past it.',
    { validator: atLeast(1), support: 'honoured' },
  ),
  key(
    'delegation.token.expiry.time.ms',
    T.LONG,
    '86400000',
    'medium',
    'How long a delegation token is valid before it must be renewed.',
    { validator: atLeast(1), support: 'honoured' },
  ),
  key(
    'delegation.token.expiry.check.interval.ms',
    T.LONG,
    '3600000',
    'low',
    'How often expired delegation tokens are removed.',
    { validator: atLeast(1), support: 'honoured' },
  ),

  // OAUTHBEARER (KIP-255, KIP-768). Each may also be set for a listener and mechanism, as
  // listener.name.<listener>.oauthbearer.<key>.
  key(
    'sasl.server.callback.handler.class',
    T.CLASS,
    null,
    'medium',
    "Server callback handler; for OAUTHBEARER, Kafka's OAuthBearerValidatorCallbackHandler selects signed JWTs.",
    { support: 'honoured' },
  ),
  key(
    'sasl.login.callback.handler.class',
    T.CLASS,
    null,
    'medium',
    "Login callback handler; Kafka's OAuthBearerLoginCallbackHandler gets tokens from the token endpoint.",
    { support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.jwks.endpoint.url',
    T.STRING,
    null,
    'medium',
    'JWKS (https:, http: or file: URL) holding the keys that sign OAUTHBEARER tokens.',
    { support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.jwks.endpoint.refresh.ms',
    T.LONG,
    '3600000',
    'low',
    'How long a fetched JWKS is used before it is fetched again.',
    { validator: atLeast(1), support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms',
    T.LONG,
    '100',
    'low',
    'First wait before retrying a failed JWKS fetch; Brook uses only the maximum below.',
    { validator: atLeast(0), support: 'no-op' },
  ),
  key(
    'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms',
    T.LONG,
    '10000',
    'low',
    'Least time between JWKS fetches caused by a token naming an unknown key id.',
    { validator: atLeast(0), support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.expected.audience',
    T.LIST,
    '',
    'low',
    'Audiences of which an OAUTHBEARER token must name one (aud); empty checks none.',
    { support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.expected.issuer',
    T.STRING,
    null,
    'low',
    'Issuer an OAUTHBEARER token must name (iss); unset checks none.',
    { support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.scope.claim.name',
    T.STRING,
    'scope',
    'low',
    'Claim holding the scope of an OAUTHBEARER token.',
    { support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.sub.claim.name',
    T.STRING,
    'sub',
    'low',
    'Claim holding the principal name of an OAUTHBEARER token.',
    { support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.clock.skew.seconds',
    T.INT,
    '30',
    'low',
    'Clock difference tolerated when checking exp, iat and nbf of an OAUTHBEARER token.',
    { validator: atLeast(0), support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.token.endpoint.url',
    T.STRING,
    null,
    'medium',
    'OAuth token endpoint (client credentials) for the broker as a client of other brokers.',
  ),

  // TLS to ZooKeeper (Kafka's ZooKeeper client keys, read-only as in Kafka; src/security/zookeeper-tls.ts).
  key('zookeeper.ssl.client.enable', T.BOOLEAN, 'false', 'medium', 'Reach ZooKeeper over TLS.', {
    support: 'honoured',
  }),
  key(
    'zookeeper.clientCnxnSocket',
    T.STRING,
    null,
    'medium',
    'ZooKeeper client socket class; org.apache.zookeeper.ClientCnxnSocketNetty for TLS.',
    { support: 'honoured' },
  ),
  key(
    'zookeeper.ssl.keystore.location',
    T.STRING,
    null,
    'medium',
    'Key store of the certificate presented to ZooKeeper.',
    { support: 'honoured' },
  ),
  key('zookeeper.ssl.keystore.password', T.PASSWORD, null, 'medium', 'Password of the ZooKeeper key store.', {
    support: 'honoured',
  }),
  key(
    'zookeeper.ssl.keystore.type',
    T.STRING,
    null,
    'medium',
    'Format of the ZooKeeper key store (PEM, PKCS12); unset: from the file name extension.',
    { support: 'honoured' },
  ),
  key(
    'zookeeper.ssl.truststore.location',
    T.STRING,
    null,
    'medium',
    'Trust store of the certificates ZooKeeper servers are checked against.',
    { support: 'honoured' },
  ),
  key(
    'zookeeper.ssl.truststore.password',
    T.PASSWORD,
    null,
    'medium',
    'Password of the ZooKeeper trust store.',
    {
      support: 'no-op',
    },
  ),
  key(
    'zookeeper.ssl.truststore.type',
    T.STRING,
    null,
    'medium',
    'Format of the ZooKeeper trust store (PEM); unset: from the file name extension.',
    { support: 'honoured' },
  ),
  key('zookeeper.ssl.protocol', T.STRING, 'TLSv1.2', 'low', 'TLS protocol used with ZooKeeper.', {
    support: 'honoured',
  }),
  key(
    'zookeeper.ssl.enabled.protocols',
    T.LIST,
    null,
    'low',
    'TLS versions enabled with ZooKeeper; unset: zookeeper.ssl.protocol.',
    { support: 'honoured' },
  ),
  key('zookeeper.ssl.cipher.suites', T.LIST, null, 'low', 'Cipher suites enabled with ZooKeeper.', {
    support: 'honoured',
  }),
  key(
    'zookeeper.ssl.endpoint.identification.enable',
    T.BOOLEAN,
    'true',
    'low',
    "Check the ZooKeeper server's host name against its certificate.",
    { support: 'honoured' },
  ),
  key('zookeeper.ssl.crl.enable', T.BOOLEAN, 'false', 'low', 'Certificate revocation lists with ZooKeeper.', {
    support: 'honoured',
  }),
  key('zookeeper.ssl.ocsp.enable', T.BOOLEAN, 'false', 'low', 'OCSP with ZooKeeper.', {
    support: 'honoured',
  }),
];
