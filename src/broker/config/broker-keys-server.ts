// Broker keys for identity, listeners, ZooKeeper, sockets and request limits, threads, security and metrics.
// Names, types, defaults, importance and update modes are Kafka 3.9's (the last Kafka line that runs on
// ZooKeeper, which Brook's metadata layout follows); the doc lines are Brook's own.

import { ConfigType as T } from './config-types.js';
import { INT_MAX_TEXT, defineKey as key, LONG_MAX_TEXT } from './define-key.js';
import { SECURITY_PROTOCOLS } from './listeners.js';
import { atLeast, oneOf } from './validators.js';

export const SERVER_KEYS = [
  // Identity.
  key(
    'broker.id',
    T.INT,
    '-1',
    'high',
    'Id of this broker; -1 lets the broker take one from meta.properties or generate one.',
    {
      support: 'honoured',
    },
  ),
  key('node.id', T.INT, '-1', 'high', 'KRaft name for the broker id; when set it must equal broker.id.', {
    support: 'honoured',
  }),
  key(
    'broker.id.generation.enable',
    T.BOOLEAN,
    'true',
    'medium',
    'Generate a broker id above reserved.broker.max.id when none is configured.',
    {
      support: 'honoured',
    },
  ),
  key(
    'reserved.broker.max.id',
    T.INT,
    '1000',
    'medium',
    'Largest id an operator may configure; generated ids start above it.',
    {
      validator: atLeast(0),
      support: 'honoured',
    },
  ),
  key(
    'broker.rack',
    T.STRING,
    null,
    'medium',
    'Rack of this broker, for rack-aware replica placement and fetch-from-follower.',
  ),

  // Listeners.
  key(
    'listeners',
    T.STRING,
    'PLAINTEXT://:9092',
    'high',
    'Comma-separated NAME://host:port addresses to listen on; an empty host binds every interface.',
    {
      updateMode: 'per-broker',
      support: 'honoured',
    },
  ),
  key(
    'advertised.listeners',
    T.STRING,
    null,
    'high',
    'Addresses given to clients in metadata when they differ from listeners; defaults to listeners.',
    {
      updateMode: 'per-broker',
      support: 'honoured',
    },
  ),
  key(
    'listener.security.protocol.map',
    T.STRING,
    'SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT',
    'low',
    'Maps each listener name to its security protocol, as NAME:PROTOCOL pairs.',
    { updateMode: 'per-broker', support: 'honoured' },
  ),
  key(
    'inter.broker.listener.name',
    T.STRING,
    null,
    'medium',
    'Listener that brokers use to reach each other; exclusive with security.inter.broker.protocol.',
    {
      support: 'honoured',
    },
  ),
  key(
    'security.inter.broker.protocol',
    T.STRING,
    'PLAINTEXT',
    'medium',
    'Security protocol between brokers when inter.broker.listener.name is not set.',
    {
      validator: oneOf(SECURITY_PROTOCOLS),
      support: 'honoured',
    },
  ),
  key(
    'control.plane.listener.name',
    T.STRING,
    null,
    'high',
    'Optional separate listener for controller-to-broker requests.',
  ),

  // ZooKeeper (the embedded metadata store is used when zookeeper.connect is not set).
  key(
    'zookeeper.connect',
    T.STRING,
    null,
    'high',
    'ZooKeeper connection string host:port[,host:port][/chroot]; unset means the embedded single-node store.',
    {
      support: 'honoured',
    },
  ),
  key(
    'zookeeper.session.timeout.ms',
    T.INT,
    '18000',
    'high',
    'ZooKeeper session timeout; the broker loses its registration after this long without contact.',
    {
      support: 'honoured',
    },
  ),
  key(
    'zookeeper.connection.timeout.ms',
    T.INT,
    null,
    'high',
    'Longest wait for a ZooKeeper connection; defaults to zookeeper.session.timeout.ms.',
    {
      support: 'honoured',
    },
  ),
  key(
    'zookeeper.max.in.flight.requests',
    T.INT,
    '10',
    'high',
    'Requests the broker may have outstanding to ZooKeeper before it waits.',
    {
      validator: atLeast(1),
      support: 'honoured',
    },
  ),
  key(
    'zookeeper.set.acl',
    T.BOOLEAN,
    'false',
    'medium',
    'Whether the znodes the broker creates get secure ACLs: all permissions for the identity the broker ' +
      'authenticated to ZooKeeper with (SASL or a TLS client certificate, which then must be configured) and ' +
      'read for everyone except on the nodes that hold credentials and secrets; false leaves them open to all.',
    {
      support: 'honoured',
    },
  ),

  // Sockets, connections and request bounds.
  key(
    'socket.send.buffer.bytes',
    T.INT,
    '102400',
    'high',
    'SO_SNDBUF for client sockets; -1 keeps the operating system default.',
    {
      support: 'honoured',
    },
  ),
  key(
    'socket.receive.buffer.bytes',
    T.INT,
    '102400',
    'high',
    'SO_RCVBUF for client sockets; -1 keeps the operating system default.',
    {
      support: 'honoured',
    },
  ),
  key(
    'socket.request.max.bytes',
    T.INT,
    '104857600',
    'high',
    'Largest request frame accepted; a larger size prefix closes the connection.',
    {
      validator: atLeast(1),
      support: 'honoured',
    },
  ),
  key(
    'socket.listen.backlog.size',
    T.INT,
    '50',
    'medium',
    'Pending connection queue length passed to listen().',
    {
      validator: atLeast(1),
      support: 'honoured',
    },
  ),
  key(
    'max.connections',
    T.INT,
    INT_MAX_TEXT,
    'medium',
    'Most client connections the broker keeps open at once; new ones wait or are closed.',
    {
      validator: atLeast(0),
      updateMode: 'cluster-wide',
      support: 'honoured',
    },
  ),
  key(
    'max.connections.per.ip',
    T.INT,
    INT_MAX_TEXT,
    'medium',
    'Most connections allowed from one IP address.',
    {
      validator: atLeast(0),
      updateMode: 'cluster-wide',
      support: 'honoured',
    },
  ),
  key(
    'max.connections.per.ip.overrides',
    T.STRING,
    '',
    'medium',
    'Per-address exceptions to max.connections.per.ip, as host:count pairs.',
    {
      updateMode: 'cluster-wide',
      support: 'honoured',
    },
  ),
  key(
    'max.connection.creation.rate',
    T.INT,
    INT_MAX_TEXT,
    'medium',
    'Most new connections accepted per second.',
    {
      validator: atLeast(0),
      updateMode: 'cluster-wide',
    },
  ),
  key('connections.max.idle.ms', T.LONG, '600000', 'medium', 'Connections idle for longer are closed.', {
    support: 'honoured',
  }),
  key(
    'connections.max.reauth.ms',
    T.LONG,
    '0',
    'medium',
    'SASL session lifetime after which clients must re-authenticate; 0 disables.',
    { support: 'honoured' },
  ),
  key(
    'queued.max.requests',
    T.INT,
    '500',
    'high',
    'Requests queued for processing across all connections before the broker stops reading sockets.',
    {
      validator: atLeast(1),
      support: 'honoured',
    },
  ),
  key(
    'queued.max.request.bytes',
    T.LONG,
    '-1',
    'medium',
    'Bytes of queued requests before the broker stops reading sockets; -1 means no byte bound.',
    {
      support: 'honoured',
    },
  ),

  // Threads: Kafka sizes thread pools with these; Node.js runs one event loop, so they are accepted and ignored.
  key(
    'num.network.threads',
    T.INT,
    '3',
    'high',
    'Kafka network thread count; accepted and ignored by Brook (one event loop).',
    {
      validator: atLeast(1),
      updateMode: 'cluster-wide',
      support: 'no-op',
    },
  ),
  key(
    'num.io.threads',
    T.INT,
    '8',
    'high',
    'Kafka request handler thread count; accepted and ignored by Brook (one event loop).',
    {
      validator: atLeast(1),
      updateMode: 'cluster-wide',
      support: 'no-op',
    },
  ),
  key(
    'background.threads',
    T.INT,
    '10',
    'high',
    'Kafka background thread count; accepted and ignored by Brook.',
    {
      validator: atLeast(1),
      updateMode: 'cluster-wide',
      support: 'no-op',
    },
  ),

  // Security.
  key(
    'authorizer.class.name',
    T.STRING,
    '',
    'low',
    'Authorizer to check ACLs with (kafka.security.authorizer.AclAuthorizer); empty allows every operation.',
    { support: 'honoured' },
  ),
  key(
    'super.users',
    T.STRING,
    '',
    'low',
    "Principals (';'-separated, e.g. User:admin;User:CN=broker) the authorizer allows every operation.",
    { support: 'honoured' },
  ),
  key(
    'allow.everyone.if.no.acl.found',
    T.BOOLEAN,
    'false',
    'low',
    'With the authorizer on, whether a resource with no ACL at all is open to everyone.',
    { support: 'honoured' },
  ),
  key(
    'principal.builder.class',
    T.CLASS,
    'org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder',
    'medium',
    'Builds the principal of an authenticated connection.',
    {
      updateMode: 'per-broker',
    },
  ),
  key('sasl.enabled.mechanisms', T.LIST, 'GSSAPI', 'medium', 'SASL mechanisms offered to clients.', {
    updateMode: 'per-broker',
  }),
  key(
    'sasl.mechanism.inter.broker.protocol',
    T.STRING,
    'GSSAPI',
    'medium',
    'SASL mechanism brokers use with each other.',
    {
      updateMode: 'per-broker',
    },
  ),
  key('sasl.jaas.config', T.PASSWORD, null, 'medium', 'JAAS login settings for SASL connections.', {
    updateMode: 'per-broker',
  }),
  key('ssl.keystore.type', T.STRING, 'JKS', 'medium', 'Format of the key store file.', {
    updateMode: 'per-broker',
  }),
  key('ssl.keystore.location', T.STRING, null, 'high', 'Key store holding the broker certificate and key.', {
    updateMode: 'per-broker',
  }),
  key('ssl.keystore.password', T.PASSWORD, null, 'high', 'Password of the key store.', {
    updateMode: 'per-broker',
  }),
  key('ssl.key.password', T.PASSWORD, null, 'high', 'Password of the private key in the key store.', {
    updateMode: 'per-broker',
  }),
  key('ssl.truststore.type', T.STRING, 'JKS', 'medium', 'Format of the trust store file.', {
    updateMode: 'per-broker',
  }),
  key(
    'ssl.truststore.location',
    T.STRING,
    null,
    'high',
    'Trust store holding the certificates the broker trusts.',
    {
      updateMode: 'per-broker',
    },
  ),
  key('ssl.truststore.password', T.PASSWORD, null, 'high', 'Password of the trust store.', {
    updateMode: 'per-broker',
  }),
  key(
    'ssl.client.auth',
    T.STRING,
    'none',
    'medium',
    'Whether TLS clients must, may or need not present a certificate.',
    {
      validator: oneOf(['required', 'requested', 'none']),
      updateMode: 'per-broker',
    },
  ),
  key('ssl.enabled.protocols', T.LIST, 'TLSv1.2,TLSv1.3', 'medium', 'TLS versions accepted.', {
    updateMode: 'per-broker',
  }),
  key(
    'ssl.endpoint.identification.algorithm',
    T.STRING,
    'https',
    'low',
    'Host name verification of peer certificates; empty disables.',
    {
      updateMode: 'per-broker',
    },
  ),

  // Metrics and quotas.
  key(
    'metric.reporters',
    T.LIST,
    '',
    'low',
    'Metric reporter classes; Brook exposes metrics through its own endpoint.',
    {
      updateMode: 'cluster-wide',
      support: 'no-op',
    },
  ),
  key('metrics.num.samples', T.INT, '2', 'low', 'Samples kept per metric window.', { validator: atLeast(1) }),
  key('metrics.sample.window.ms', T.LONG, '30000', 'low', 'Length of one metric sample window.', {
    validator: atLeast(1),
  }),
  key('metrics.recording.level', T.STRING, 'INFO', 'low', 'Highest recording level of metrics kept.'),
  key('quota.window.num', T.INT, '11', 'low', 'Samples kept in memory for client quotas.', {
    validator: atLeast(1),
  }),
  key('quota.window.size.seconds', T.INT, '1', 'low', 'Length of one client quota sample.', {
    validator: atLeast(1),
  }),
  key('replication.quota.window.num', T.INT, '11', 'low', 'Samples kept in memory for replication quotas.', {
    validator: atLeast(1),
  }),
  key('replication.quota.window.size.seconds', T.INT, '1', 'low', 'Length of one replication quota sample.', {
    validator: atLeast(1),
  }),
  key(
    'controller.quota.window.num',
    T.INT,
    '11',
    'low',
    'Samples kept in memory for controller mutation quotas.',
    {
      validator: atLeast(1),
    },
  ),
  key(
    'controller.quota.window.size.seconds',
    T.INT,
    '1',
    'low',
    'Length of one controller mutation quota sample.',
    {
      validator: atLeast(1),
    },
  ),
  key(
    'client.quota.callback.class',
    T.CLASS,
    null,
    'low',
    'Custom quota callback; Brook supports only the built-in quotas.',
  ),
  // These three exist in Kafka only as dynamic broker configs; Brook also accepts them statically.
  key(
    'leader.replication.throttled.rate',
    T.LONG,
    LONG_MAX_TEXT,
    'medium',
    'Bytes per second a leader may send to throttled followers.',
    {
      validator: atLeast(0),
      updateMode: 'per-broker',
    },
  ),
  key(
    'follower.replication.throttled.rate',
    T.LONG,
    LONG_MAX_TEXT,
    'medium',
    'Bytes per second a follower may fetch for throttled replicas.',
    {
      validator: atLeast(0),
      updateMode: 'per-broker',
    },
  ),
  key(
    'replica.alter.log.dirs.io.max.bytes.per.second',
    T.LONG,
    LONG_MAX_TEXT,
    'medium',
    'Bytes per second for moving replicas between log directories.',
    {
      validator: atLeast(0),
      updateMode: 'per-broker',
    },
  ),
];
