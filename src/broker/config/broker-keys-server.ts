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
    'Id of this broker in the cluster. -1 takes the id stored in meta.properties or, with ' +
      'broker.id.generation.enable, generates one above reserved.broker.max.id.',
    {
      support: 'honoured',
    },
  ),
  key(
    'node.id',
    T.INT,
    '-1',
    'high',
    'KRaft name of the broker id; when both are set it must equal broker.id.',
    {
      support: 'honoured',
    },
  ),
  key(
    'broker.id.generation.enable',
    T.BOOLEAN,
    'true',
    'medium',
    'Whether a broker started without a broker.id gets one generated through ZooKeeper, above ' +
      'reserved.broker.max.id.',
    {
      support: 'honoured',
    },
  ),
  key(
    'reserved.broker.max.id',
    T.INT,
    '1000',
    'medium',
    'Largest broker.id an operator may configure; generated ids start above it.',
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
    'Rack (or availability zone) of the broker: replicas of a partition are spread over racks, and ' +
      'with replica.selector.class consumers may read from a replica in their own rack.',
    { support: 'honoured' },
  ),

  // Listeners.
  key(
    'listeners',
    T.STRING,
    'PLAINTEXT://:9092',
    'high',
    'Comma-separated listeners the broker binds, each NAME://host:port; the name picks the security ' +
      'protocol through listener.security.protocol.map. An empty host binds every interface.',
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
    'Listeners published in ZooKeeper for clients and other brokers, when they differ from listeners ' +
      '(behind NAT, a proxy or a container); unset, listeners is used. 0.0.0.0 cannot be advertised.',
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
    'Security protocol of each listener name, as comma-separated NAME:PROTOCOL pairs where the ' +
      'protocol is PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.',
    { updateMode: 'per-broker', support: 'honoured' },
  ),
  key(
    'inter.broker.listener.name',
    T.STRING,
    null,
    'medium',
    'Listener brokers use to reach each other; unset, the listener of security.inter.broker.protocol ' +
      'is used. Setting both is an error.',
    {
      support: 'honoured',
    },
  ),
  key(
    'security.inter.broker.protocol',
    T.STRING,
    'PLAINTEXT',
    'medium',
    'Security protocol brokers use with each other, one of PLAINTEXT, SSL, SASL_PLAINTEXT and ' +
      'SASL_SSL; used when inter.broker.listener.name is not set.',
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
    "Listener kept for the controller's requests to brokers (KIP-291), so that they do not queue " +
      'behind data requests; unset, they use the inter-broker listener.',
  ),

  // ZooKeeper (the embedded metadata store is used when zookeeper.connect is not set).
  key(
    'zookeeper.connect',
    T.STRING,
    null,
    'high',
    'ZooKeeper connection string: comma-separated host:port pairs, optionally followed by a chroot ' +
      'path (/kafka) that is created at startup if missing. Brook: unset keeps metadata in an embedded ' +
      'single-node store.',
    {
      support: 'honoured',
    },
  ),
  key(
    'zookeeper.session.timeout.ms',
    T.INT,
    '18000',
    'high',
    'ZooKeeper session timeout in milliseconds: a broker not heard from for this long loses its ' +
      'session, and with it its registration and leaderships.',
    {
      support: 'honoured',
    },
  ),
  key(
    'zookeeper.connection.timeout.ms',
    T.INT,
    null,
    'high',
    'Longest time, in milliseconds, the broker waits to connect to ZooKeeper; unset, ' +
      'zookeeper.session.timeout.ms is used.',
    {
      support: 'honoured',
    },
  ),
  key(
    'zookeeper.max.in.flight.requests',
    T.INT,
    '10',
    'high',
    'Most requests the broker sends to ZooKeeper without a reply before it waits.',
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
    "Size, in bytes, of the send buffer (SO_SNDBUF) of the broker's sockets; -1 keeps the operating " +
      'system default.',
    {
      support: 'honoured',
    },
  ),
  key(
    'socket.receive.buffer.bytes',
    T.INT,
    '102400',
    'high',
    "Size, in bytes, of the receive buffer (SO_RCVBUF) of the broker's sockets; -1 keeps the " +
      'operating system default.',
    {
      support: 'honoured',
    },
  ),
  key(
    'socket.request.max.bytes',
    T.INT,
    '104857600',
    'high',
    'Largest request, in bytes, the broker accepts; a connection announcing a larger one is closed.',
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
    'Length of the queue of pending connections of each listening socket (the backlog of listen).',
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
    'Most connections the broker keeps open at once, over all listeners (per listener with the ' +
      'listener.name.<listener>. prefix); further ones wait or are closed.',
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
    'Most connections the broker accepts from one IP address; max.connections.per.ip.overrides sets ' +
      'exceptions.',
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
    'Exceptions to max.connections.per.ip, as comma-separated host:count or address:count pairs.',
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
    'Most new connections the broker accepts per second, over all listeners (per listener with the ' +
      'listener.name.<listener>. prefix); faster ones are delayed.',
    {
      validator: atLeast(0),
      updateMode: 'cluster-wide',
      support: 'honoured',
    },
  ),
  key(
    'connections.max.idle.ms',
    T.LONG,
    '600000',
    'medium',
    'Time, in milliseconds, after which a connection without traffic is closed.',
    {
      support: 'honoured',
    },
  ),
  key(
    'connections.max.reauth.ms',
    T.LONG,
    '0',
    'medium',
    'Longest life, in milliseconds, of an authenticated SASL session: a client must re-authenticate ' +
      'before it ends (KIP-368) or its connection is closed; 0 sets no limit.',
    { support: 'honoured' },
  ),
  key(
    'connection.failed.authentication.delay.ms',
    T.INT,
    '100',
    'low',
    'Time, in milliseconds, by which the answer to a failed SASL authentication, and the close of its ' +
      'connection, are delayed (KIP-306); 0 for none. Must be less than connections.max.idle.ms.',
    { validator: atLeast(0), support: 'honoured' },
  ),
  key(
    'queued.max.requests',
    T.INT,
    '500',
    'high',
    'Most requests waiting to be processed, over all connections, before the broker stops reading ' +
      'from sockets.',
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
    'Most bytes of requests waiting to be processed before the broker stops reading from sockets; -1 ' +
      'sets no bound in bytes.',
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
    'Threads Kafka uses to receive requests and send responses; accepted and ignored by Brook, which ' +
      'serves sockets from one event loop.',
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
    'Threads Kafka uses to process requests, disk I/O included; accepted and ignored by Brook (one ' +
      'event loop, asynchronous I/O).',
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
    'Threads Kafka uses for background tasks; accepted and ignored by Brook.',
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
    'Authorizer that checks every request against ACLs: Brook provides ' +
      'kafka.security.authorizer.AclAuthorizer (ACLs stored in ZooKeeper); empty allows every ' +
      'operation.',
    { support: 'honoured' },
  ),
  key(
    'super.users',
    T.STRING,
    '',
    'low',
    'Principals allowed every operation whatever the ACLs, separated by semicolons ' +
      '(User:admin;User:CN=broker).',
    { support: 'honoured' },
  ),
  key(
    'allow.everyone.if.no.acl.found',
    T.BOOLEAN,
    'false',
    'low',
    'With an authorizer, whether a resource that no ACL matches is open to everyone (true) or only ' +
      'to super users (false).',
    { support: 'honoured' },
  ),
  key(
    'principal.builder.class',
    T.CLASS,
    'org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder',
    'medium',
    "Class that builds the principal of a connection; Brook computes what Kafka's " +
      'DefaultKafkaPrincipalBuilder does (mapped certificate name, SASL user name, User:ANONYMOUS).',
    {
      updateMode: 'per-broker',
    },
  ),
  key(
    'sasl.enabled.mechanisms',
    T.LIST,
    'GSSAPI',
    'medium',
    'SASL mechanisms offered to clients, a list of GSSAPI, PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and ' +
      'OAUTHBEARER; Brook has all but GSSAPI (Kerberos).',
    { support: 'honoured', updateMode: 'per-broker' },
  ),
  key(
    'sasl.mechanism.inter.broker.protocol',
    T.STRING,
    'GSSAPI',
    'medium',
    'SASL mechanism brokers use with each other: GSSAPI, PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or ' +
      'OAUTHBEARER.',
    { support: 'honoured', updateMode: 'per-broker' },
  ),
  key(
    'sasl.jaas.config',
    T.PASSWORD,
    null,
    'medium',
    'JAAS login configuration in the one-line form LoginModule required key="value";, usually set ' +
      'per listener and mechanism (listener.name.<listener>.<mechanism>.sasl.jaas.config).',
    { support: 'honoured', updateMode: 'per-broker' },
  ),
  key(
    'ssl.keystore.type',
    T.STRING,
    'JKS',
    'medium',
    'Format of the key store: JKS, PKCS12 or PEM. Node cannot read JKS, so Brook takes PKCS12 and PEM.',
    { support: 'honoured', updateMode: 'per-broker' },
  ),
  key(
    'ssl.keystore.location',
    T.STRING,
    null,
    'high',
    "Path of the key store holding the broker's private key and certificate chain.",
    { support: 'honoured', updateMode: 'per-broker' },
  ),
  key(
    'ssl.keystore.password',
    T.PASSWORD,
    null,
    'high',
    'Password of the key store file; a PEM key store takes none (its key password is ssl.key.password).',
    { support: 'honoured', updateMode: 'per-broker' },
  ),
  key(
    'ssl.key.password',
    T.PASSWORD,
    null,
    'high',
    'Password of the private key in the key store, or of the encrypted PEM key in ssl.keystore.key.',
    { support: 'honoured', updateMode: 'per-broker' },
  ),
  key(
    'ssl.truststore.type',
    T.STRING,
    'JKS',
    'medium',
    'Format of the trust store: JKS, PKCS12 or PEM. Node cannot read JKS, so Brook takes PKCS12 and ' +
      'PEM.',
    { support: 'honoured', updateMode: 'per-broker' },
  ),
  key(
    'ssl.truststore.location',
    T.STRING,
    null,
    'high',
    'Path of the trust store holding the CA certificates the broker trusts, for client certificates ' +
      'and other brokers.',
    { support: 'honoured', updateMode: 'per-broker' },
  ),
  key(
    'ssl.truststore.password',
    T.PASSWORD,
    null,
    'high',
    'Password of the trust store file; a PEM trust store takes none.',
    { support: 'honoured', updateMode: 'per-broker' },
  ),
  key(
    'ssl.client.auth',
    T.STRING,
    'none',
    'medium',
    'Whether TLS clients present a certificate: required (a trusted one is needed), requested (asked ' +
      'for, optional) or none.',
    { support: 'honoured', validator: oneOf(['required', 'requested', 'none']), updateMode: 'per-broker' },
  ),
  key(
    'ssl.enabled.protocols',
    T.LIST,
    'TLSv1.2,TLSv1.3',
    'medium',
    'TLS versions accepted, a list such as TLSv1.2,TLSv1.3.',
    { support: 'honoured', updateMode: 'per-broker' },
  ),
  key(
    'ssl.endpoint.identification.algorithm',
    T.STRING,
    'https',
    'low',
    "How the broker, as a TLS client of other brokers, checks a server's host name against its " +
      'certificate: https checks it, empty turns the check off.',
    { support: 'honoured', updateMode: 'per-broker' },
  ),

  // Metrics and quotas.
  key(
    'metric.reporters',
    T.LIST,
    '',
    'low',
    'Classes Kafka loads as metric reporters. Brook, which exposes metrics on its own endpoint ' +
      '(brook.metrics.listener), accepts Java class names and ignores them, and refuses a name no JVM could load ' +
      '(an empty entry, not a class name) as Kafka refuses a class it cannot find.',
    {
      updateMode: 'cluster-wide',
      support: 'no-op',
    },
  ),
  key('metrics.num.samples', T.INT, '2', 'low', 'Number of samples kept to compute metrics.', {
    validator: atLeast(1),
  }),
  key(
    'metrics.sample.window.ms',
    T.LONG,
    '30000',
    'low',
    'Time, in milliseconds, one metric sample covers.',
    {
      validator: atLeast(1),
    },
  ),
  key(
    'metrics.recording.level',
    T.STRING,
    'INFO',
    'low',
    'Highest level of metrics recorded: INFO, DEBUG or TRACE.',
  ),
  key('quota.window.num', T.INT, '11', 'low', 'Number of samples kept in memory to compute client quotas.', {
    support: 'honoured',
    validator: atLeast(1),
  }),
  key('quota.window.size.seconds', T.INT, '1', 'low', 'Time, in seconds, one client quota sample covers.', {
    support: 'honoured',
    validator: atLeast(1),
  }),
  key(
    'replication.quota.window.num',
    T.INT,
    '11',
    'low',
    'Number of samples kept in memory to compute replication quotas.',
    { support: 'honoured', validator: atLeast(1) },
  ),
  key(
    'replication.quota.window.size.seconds',
    T.INT,
    '1',
    'low',
    'Time, in seconds, one replication quota sample covers.',
    { support: 'honoured', validator: atLeast(1) },
  ),
  key(
    'controller.quota.window.num',
    T.INT,
    '11',
    'low',
    'Number of samples kept in memory to compute controller mutation quotas.',
    { support: 'honoured', validator: atLeast(1) },
  ),
  key(
    'controller.quota.window.size.seconds',
    T.INT,
    '1',
    'low',
    'Time, in seconds, one controller mutation quota sample covers.',
    { support: 'honoured', validator: atLeast(1) },
  ),
  key(
    'client.quota.callback.class',
    T.CLASS,
    null,
    'low',
    'Class Kafka calls to decide client quotas; Brook has only the built-in quotas and refuses a ' +
      'value at startup.',
  ),
  // These three exist in Kafka only as dynamic broker configs (its broker quota configs); Brook also accepts them
  // statically. They are not among Kafka's per-broker keys: a cluster default applies to every broker without its
  // own value, as Kafka's BrokerConfigHandler reads them.
  key(
    'leader.replication.throttled.rate',
    T.LONG,
    LONG_MAX_TEXT,
    'medium',
    'Cap, in bytes per second, on what a leader sends to followers of the replicas listed in ' +
      'leader.replication.throttled.replicas; usually set while partitions are reassigned.',
    {
      validator: atLeast(0),
      updateMode: 'cluster-wide',
    },
  ),
  key(
    'follower.replication.throttled.rate',
    T.LONG,
    LONG_MAX_TEXT,
    'medium',
    'Cap, in bytes per second, on what a follower fetches for the replicas listed in ' +
      'follower.replication.throttled.replicas; usually set while partitions are reassigned.',
    {
      validator: atLeast(0),
      updateMode: 'cluster-wide',
    },
  ),
  key(
    'replica.alter.log.dirs.io.max.bytes.per.second',
    T.LONG,
    LONG_MAX_TEXT,
    'medium',
    'Cap, in bytes per second, on the disk I/O of moving replicas between the log directories of one ' +
      'broker.',
    {
      validator: atLeast(0),
      updateMode: 'cluster-wide',
    },
  ),
];
