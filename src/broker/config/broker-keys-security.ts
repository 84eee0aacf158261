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
];
