// Broker keys for topics, replication, leadership and the controller: partition and replica defaults, follower
// fetching, ISR membership, leader balancing, controlled shutdown, topic auto-creation and deletion, and the
// request purgatories. Kafka 3.9 names, types, defaults and update modes; Brook's own doc lines.

import { ConfigType as T } from './config-types.js';
import { defineKey as key } from './define-key.js';
import { atLeast } from './validators.js';

export const REPLICATION_KEYS = [
  key(
    'default.replication.factor',
    T.INT,
    '1',
    'medium',
    'Replication factor of topics created without one (auto-created topics, CreateTopics with -1).',
    {
      support: 'honoured',
    },
  ),
  key(
    'auto.create.topics.enable',
    T.BOOLEAN,
    'true',
    'high',
    'Whether a Metadata request naming a topic that does not exist creates it, when the client ' +
      'allows it, with num.partitions and default.replication.factor.',
    {
      support: 'honoured',
    },
  ),
  key(
    'delete.topic.enable',
    T.BOOLEAN,
    'true',
    'high',
    'Whether topics may be deleted; when false, DeleteTopics fails with TOPIC_DELETION_DISABLED.',
    {
      support: 'honoured',
    },
  ),
  key(
    'replica.lag.time.max.ms',
    T.LONG,
    '30000',
    'high',
    'Time, in milliseconds, after which a follower that has sent no fetch, or has not reached the ' +
      "leader's log end offset, is removed from the ISR.",
    {
      support: 'honoured',
    },
  ),
  key(
    'replica.socket.timeout.ms',
    T.INT,
    '30000',
    'high',
    'Socket timeout, in milliseconds, of follower fetch requests; it should be at least ' +
      'replica.fetch.wait.max.ms.',
    { support: 'honoured' },
  ),
  key(
    'replica.socket.receive.buffer.bytes',
    T.INT,
    '65536',
    'high',
    'Size, in bytes, of the receive buffer (SO_RCVBUF) of follower fetch connections.',
  ),
  key(
    'replica.fetch.max.bytes',
    T.INT,
    '1048576',
    'medium',
    'Bytes a follower asks for per partition in one fetch. Not a hard limit: a first batch larger ' +
      'than this is still returned whole, so that replication goes on.',
    { support: 'honoured', validator: atLeast(0) },
  ),
  key(
    'replica.fetch.response.max.bytes',
    T.INT,
    '10485760',
    'medium',
    'Bytes a follower asks for in a whole fetch response. Not a hard limit: a first batch larger ' +
      'than this is still returned whole.',
    { support: 'honoured', validator: atLeast(0) },
  ),
  key(
    'replica.fetch.wait.max.ms',
    T.INT,
    '500',
    'medium',
    'Longest time, in milliseconds, a follower fetch waits at the leader for data; keep it below ' +
      'replica.lag.time.max.ms so that followers of quiet partitions stay in the ISR.',
    { support: 'honoured' },
  ),
  key(
    'replica.fetch.min.bytes',
    T.INT,
    '1',
    'high',
    'Fewest bytes a follower fetch waits for before the leader answers, up to ' +
      'replica.fetch.wait.max.ms.',
    { support: 'honoured' },
  ),
  key(
    'replica.fetch.backoff.ms',
    T.INT,
    '1000',
    'medium',
    'Time, in milliseconds, a follower waits after a failed fetch before it fetches again.',
    { support: 'honoured', validator: atLeast(0) },
  ),
  key(
    'replica.high.watermark.checkpoint.interval.ms',
    T.LONG,
    '5000',
    'high',
    'How often, in milliseconds, the high watermarks of all partitions are written to the ' +
      'replication-offset-checkpoint file.',
    {
      support: 'honoured',
    },
  ),
  key(
    'replica.selector.class',
    T.STRING,
    null,
    'medium',
    'Class that picks the replica a consumer reads from (KIP-392): ' +
      "org.apache.kafka.common.replica.RackAwareReplicaSelector prefers one in the consumer's rack " +
      '(client.rack); unset, consumers read from the leader.',
    { support: 'honoured' },
  ),
  key(
    'num.replica.fetchers',
    T.INT,
    '1',
    'high',
    'Number of fetchers per source broker replicating its partitions to this broker; more fetchers ' +
      'replicate more in parallel. A partition is fetched by fetcher abs(31 * hash(topic) + partition) % ' +
      'fetchers, as in Kafka; a dynamic change moves partitions between fetchers with their fetch state.',
    {
      validator: atLeast(1),
      updateMode: 'cluster-wide',
      support: 'honoured',
    },
  ),
  key(
    'num.replica.alter.log.dirs.threads',
    T.INT,
    null,
    'high',
    'Threads Kafka uses to move replicas between log directories (unset: one per directory); ' +
      'accepted and ignored by Brook.',
    {
      support: 'no-op',
    },
  ),
  key(
    'auto.leader.rebalance.enable',
    T.BOOLEAN,
    'true',
    'high',
    "Whether the controller moves leadership back to each partition's preferred replica (the first " +
      "in its list) when a broker's imbalance passes leader.imbalance.per.broker.percentage, checked " +
      'every leader.imbalance.check.interval.seconds.',
    { support: 'honoured' },
  ),
  key(
    'leader.imbalance.per.broker.percentage',
    T.INT,
    '10',
    'high',
    'Share, in percent, of the partitions whose preferred leader is a broker but which another ' +
      'broker leads, above which the controller rebalances leadership.',
    { support: 'honoured' },
  ),
  key(
    'leader.imbalance.check.interval.seconds',
    T.LONG,
    '300',
    'high',
    'How often, in seconds, the controller checks leader balance.',
    { support: 'honoured', validator: atLeast(1) },
  ),
  key(
    'controlled.shutdown.enable',
    T.BOOLEAN,
    'true',
    'medium',
    'Whether a stopping broker first asks the controller to move its leaderships to other replicas ' +
      '(controlled shutdown).',
    {
      support: 'honoured',
    },
  ),
  key(
    'controlled.shutdown.max.retries',
    T.INT,
    '3',
    'medium',
    'Attempts at controlled shutdown before the broker shuts down without it.',
    { support: 'honoured' },
  ),
  key(
    'controlled.shutdown.retry.backoff.ms',
    T.LONG,
    '5000',
    'medium',
    'Time, in milliseconds, between two attempts at controlled shutdown.',
    { support: 'honoured' },
  ),
  key(
    'controller.socket.timeout.ms',
    T.INT,
    '30000',
    'medium',
    "Socket timeout, in milliseconds, of the controller's connections to brokers.",
  ),
  key(
    'fetch.max.bytes',
    T.INT,
    '57671680',
    'medium',
    'Most bytes the broker returns in one Fetch response, whatever the client asks; at least 1024.',
    {
      validator: atLeast(1024),
      support: 'honoured',
    },
  ),
  key(
    'max.incremental.fetch.session.cache.slots',
    T.INT,
    '1000',
    'medium',
    'Most incremental fetch sessions (KIP-227) the broker keeps at once.',
    {
      validator: atLeast(0),
      support: 'honoured',
    },
  ),
  key(
    'fetch.purgatory.purge.interval.requests',
    T.INT,
    '1000',
    'medium',
    'Number of requests between two purges of completed entries from the fetch purgatory.',
    {
      support: 'honoured',
    },
  ),
  key(
    'producer.purgatory.purge.interval.requests',
    T.INT,
    '1000',
    'medium',
    'Number of requests between two purges of completed entries from the produce purgatory.',
    {
      support: 'honoured',
    },
  ),
  key(
    'delete.records.purgatory.purge.interval.requests',
    T.INT,
    '1',
    'medium',
    'Number of requests between two purges of completed entries from the DeleteRecords purgatory.',
    {
      support: 'honoured',
    },
  ),
  key(
    'inter.broker.protocol.version',
    T.STRING,
    '3.9-IV0',
    'medium',
    'Version of the inter-broker protocol (3.9-IV0), which Kafka pins during rolling upgrades; Brook ' +
      'reports it and ignores it.',
  ),
];
