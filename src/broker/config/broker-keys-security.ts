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
    'Certificate chain of the broker in PEM, given inline instead of a file; needs ' +
      'ssl.keystore.type=PEM and ssl.keystore.key.',
    { updateMode: 'per-broker', support: 'honoured' },
  ),
  key(
    'ssl.keystore.key',
    T.PASSWORD,
    null,
    'high',
    'Private key of the broker in PEM, encrypted with ssl.key.password if one is set, given inline ' +
      'instead of a file; needs ssl.keystore.type=PEM.',
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
    'Trusted CA certificates in PEM, given inline instead of a file; needs ssl.truststore.type=PEM.',
    { updateMode: 'per-broker', support: 'honoured' },
  ),
  key(
    'ssl.protocol',
    T.STRING,
    'TLSv1.3',
    'high',
    'TLS protocol of the TLS context, TLSv1.2 or TLSv1.3 (the default); the versions actually ' +
      'accepted are ssl.enabled.protocols.',
    {
      updateMode: 'per-broker',
      support: 'honoured',
    },
  ),
  key(
    'ssl.cipher.suites',
    T.LIST,
    '',
    'medium',
    'Cipher suites accepted, as a list of names; empty accepts the TLS library defaults.',
    {
      updateMode: 'per-broker',
      support: 'honoured',
    },
  ),
  key(
    'ssl.principal.mapping.rules',
    T.STRING,
    'DEFAULT',
    'low',
    "Rules that turn a client certificate's distinguished name into a principal name, in Kafka's " +
      'RULE:pattern/replacement/[LU] syntax tried in order; DEFAULT keeps the whole name.',
    { support: 'honoured' },
  ),
  key(
    'ssl.keymanager.algorithm',
    T.STRING,
    'SunX509',
    'low',
    'Java key manager factory algorithm; accepted and unused, as Node has no key managers.',
    {
      updateMode: 'per-broker',
      support: 'no-op',
    },
  ),
  key(
    'ssl.trustmanager.algorithm',
    T.STRING,
    'PKIX',
    'low',
    'Java trust manager factory algorithm; accepted and unused, as Node has no trust managers.',
    {
      updateMode: 'per-broker',
      support: 'no-op',
    },
  ),
  key(
    'ssl.provider',
    T.STRING,
    null,
    'medium',
    'Java security provider of TLS connections; accepted and unused by Node.',
    {
      updateMode: 'per-broker',
      support: 'no-op',
    },
  ),
  key(
    'ssl.secure.random.implementation',
    T.STRING,
    null,
    'low',
    'Java random number generator for TLS; accepted and unused by Node.',
    { updateMode: 'per-broker', support: 'no-op' },
  ),
  key(
    'sasl.server.max.receive.size',
    T.INT,
    '524288',
    'low',
    'Largest request, in bytes, a connection may send before it has authenticated; a larger one ' +
      'closes it. -1: no bound but socket.request.max.bytes.',
    // Kafka checks no range: -1 is its NetworkReceive.UNLIMITED; 0 admits only empty frames, below -1 none.
    { support: 'honoured' },
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
    'Deprecated name of delegation.token.secret.key, read when that key is not set.',
    { support: 'honoured' },
  ),
  key(
    'delegation.token.max.lifetime.ms',
    T.LONG,
    '604800000',
    'medium',
    'Longest life of a delegation token, in milliseconds from its creation; renewals cannot extend ' +
      'it beyond.',
    { validator: atLeast(1), support: 'honoured' },
  ),
  key(
    'delegation.token.expiry.time.ms',
    T.LONG,
    '86400000',
    'medium',
    'Time, in milliseconds, a delegation token stays valid after its creation or last renewal unless ' +
      'renewed again.',
    { validator: atLeast(1), support: 'honoured' },
  ),
  key(
    'delegation.token.expiry.check.interval.ms',
    T.LONG,
    '3600000',
    'low',
    'How often, in milliseconds, expired delegation tokens are looked for and removed.',
    { validator: atLeast(1), support: 'honoured' },
  ),

  // OAUTHBEARER (KIP-255, KIP-768). Each may also be set for a listener and mechanism, as
  // listener.name.<listener>.oauthbearer.<key>.
  key(
    'sasl.server.callback.handler.class',
    T.CLASS,
    null,
    'medium',
    "Server callback handler of a SASL mechanism; for OAUTHBEARER, Kafka's " +
      'OAuthBearerValidatorCallbackHandler turns on the checking of signed JWTs against the JWKS.',
    { support: 'honoured' },
  ),
  key(
    'sasl.login.callback.handler.class',
    T.CLASS,
    null,
    'medium',
    "Login callback handler of a SASL mechanism; for OAUTHBEARER, Kafka's " +
      'OAuthBearerLoginCallbackHandler gets tokens from sasl.oauthbearer.token.endpoint.url.',
    { support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.jwks.endpoint.url',
    T.STRING,
    null,
    'medium',
    'URL (https:, http: or file:) of the JWKS holding the keys that sign OAUTHBEARER tokens.',
    { support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.jwks.endpoint.refresh.ms',
    T.LONG,
    '3600000',
    'low',
    'Time, in milliseconds, a fetched JWKS is used before it is fetched again.',
    { validator: atLeast(1), support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms',
    T.LONG,
    '100',
    'low',
    'First wait, in milliseconds, before a failed JWKS fetch is retried; accepted and unused, as ' +
      'Brook applies only the maximum wait.',
    { validator: atLeast(0), support: 'no-op' },
  ),
  key(
    'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms',
    T.LONG,
    '10000',
    'low',
    'Least time, in milliseconds, between two JWKS fetches caused by tokens naming an unknown key id.',
    { validator: atLeast(0), support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.expected.audience',
    T.LIST,
    '',
    'low',
    'Audiences an OAUTHBEARER token must name at least one of in its aud claim; empty checks no ' +
      'audience.',
    { support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.expected.issuer',
    T.STRING,
    null,
    'low',
    'Issuer an OAUTHBEARER token must name in its iss claim; unset checks no issuer.',
    { support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.scope.claim.name',
    T.STRING,
    'scope',
    'low',
    'Name of the claim holding the scopes of an OAUTHBEARER token.',
    { support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.sub.claim.name',
    T.STRING,
    'sub',
    'low',
    'Name of the claim holding the principal name of an OAUTHBEARER token.',
    { support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.clock.skew.seconds',
    T.INT,
    '30',
    'low',
    'Clock difference, in seconds, tolerated when the exp, iat and nbf claims of an OAUTHBEARER ' +
      'token are checked.',
    { validator: atLeast(0), support: 'honoured' },
  ),
  key(
    'sasl.oauthbearer.token.endpoint.url',
    T.STRING,
    null,
    'medium',
    'OAuth token endpoint (client credentials grant) the broker gets its own tokens from when it ' +
      'authenticates to other brokers with OAUTHBEARER.',
    { support: 'honoured' },
  ),

  // TLS to ZooKeeper (Kafka's ZooKeeper client keys, read-only as in Kafka; src/security/zookeeper-tls.ts).
  key(
    'zookeeper.ssl.client.enable',
    T.BOOLEAN,
    'false',
    'medium',
    "Whether the broker connects to ZooKeeper over TLS (the servers' secureClientPort).",
    {
      support: 'honoured',
    },
  ),
  key(
    'zookeeper.clientCnxnSocket',
    T.STRING,
    null,
    'medium',
    'ZooKeeper client socket class; TLS needs org.apache.zookeeper.ClientCnxnSocketNetty (or the key ' +
      'left unset).',
    { support: 'honoured' },
  ),
  key(
    'zookeeper.ssl.keystore.location',
    T.STRING,
    null,
    'medium',
    'Path of the key store with the client certificate and key the broker presents to ZooKeeper.',
    { support: 'honoured' },
  ),
  key(
    'zookeeper.ssl.keystore.password',
    T.PASSWORD,
    null,
    'medium',
    'Password of the ZooKeeper key store; also decrypts an encrypted PEM key.',
    {
      support: 'honoured',
    },
  ),
  key(
    'zookeeper.ssl.keystore.type',
    T.STRING,
    null,
    'medium',
    'Format of the ZooKeeper key store: JKS, PKCS12 or PEM; unset, guessed from the file name ' +
      'extension. Node cannot read JKS.',
    { support: 'honoured' },
  ),
  key(
    'zookeeper.ssl.truststore.location',
    T.STRING,
    null,
    'medium',
    'Path of the trust store with the CA certificates ZooKeeper servers are checked against.',
    { support: 'honoured' },
  ),
  key(
    'zookeeper.ssl.truststore.password',
    T.PASSWORD,
    null,
    'medium',
    'Password of the ZooKeeper trust store; accepted and unused, as Brook reads PEM trust stores, ' +
      'which have none.',
    {
      support: 'no-op',
    },
  ),
  key(
    'zookeeper.ssl.truststore.type',
    T.STRING,
    null,
    'medium',
    'Format of the ZooKeeper trust store: JKS, PKCS12 or PEM (Brook reads PEM); unset, guessed from ' +
      'the file name extension.',
    { support: 'honoured' },
  ),
  key(
    'zookeeper.ssl.protocol',
    T.STRING,
    'TLSv1.2',
    'low',
    'TLS protocol used with ZooKeeper, TLSv1.2 (the default) or TLSv1.3.',
    {
      support: 'honoured',
    },
  ),
  key(
    'zookeeper.ssl.enabled.protocols',
    T.LIST,
    null,
    'low',
    'TLS versions enabled with ZooKeeper, a list such as TLSv1.2,TLSv1.3; unset, only ' +
      'zookeeper.ssl.protocol.',
    { support: 'honoured' },
  ),
  key(
    'zookeeper.ssl.cipher.suites',
    T.LIST,
    null,
    'low',
    'Cipher suites enabled with ZooKeeper, as a list of names; unset, the TLS library defaults.',
    {
      support: 'honoured',
    },
  ),
  key(
    'zookeeper.ssl.endpoint.identification.algorithm',
    T.STRING,
    'HTTPS',
    'low',
    "Whether the ZooKeeper server's host name is checked against its certificate: HTTPS (in any case) checks it, " +
      "any other value, an empty one included, does not (as Kafka maps it to ZooKeeper's hostnameVerification).",
    { support: 'honoured' },
  ),
  key(
    'zookeeper.ssl.crl.enable',
    T.BOOLEAN,
    'false',
    'low',
    'Whether certificate revocation lists are checked for ZooKeeper certificates; Brook does not ' +
      'check revocation and refuses true at startup.',
    {
      support: 'honoured',
    },
  ),
  key(
    'zookeeper.ssl.ocsp.enable',
    T.BOOLEAN,
    'false',
    'low',
    'Whether OCSP is used to check ZooKeeper certificates for revocation; Brook does not check ' +
      'revocation and refuses true at startup.',
    {
      support: 'honoured',
    },
  ),
  // The password encoder: dynamic password configs (sasl.jaas.config, key store passwords) are stored encrypted.
  key(
    'password.encoder.secret',
    T.PASSWORD,
    null,
    'medium',
    'Secret from which the key that encrypts dynamic password configs in the metadata store is derived; ' +
      'without it AlterConfigs refuses password configs.',
    { support: 'honoured' },
  ),
  key(
    'password.encoder.keyfactory.algorithm',
    T.STRING,
    null,
    'low',
    'PBKDF2 variant deriving the password encoder key: PBKDF2WithHmacSHA512 (unset), PBKDF2WithHmacSHA256 ' +
      'or PBKDF2WithHmacSHA1.',
    { support: 'honoured' },
  ),
  key(
    'password.encoder.cipher.algorithm',
    T.STRING,
    'AES/CBC/PKCS5Padding',
    'low',
    'Cipher encrypting dynamic password configs: AES/CBC/PKCS5Padding or AES/GCM/NoPadding.',
    { support: 'honoured' },
  ),
  key(
    'password.encoder.key.length',
    T.INT,
    '128',
    'low',
    'Key length in bits of the password encoder (128, 192 or 256).',
    { validator: atLeast(8), support: 'honoured' },
  ),
  key('password.encoder.iterations', T.INT, '4096', 'low', 'PBKDF2 iterations of the password encoder key.', {
    validator: atLeast(1024),
    support: 'honoured',
  }),
];
