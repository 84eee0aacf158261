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
    'Replication factor of topics created without one.',
    {
      support: 'honoured',
    },
  ),
  key(
    'auto.create.topics.enable',
    T.BOOLEAN,
    'true',
    'high',
    'Create a topic when Metadata asks for one that does not exist (and the client allows it).',
    {
      support: 'honoured',
    },
  ),
  key(
    'delete.topic.enable',
    T.BOOLEAN,
    'true',
    'high',
    'Allow DeleteTopics; when false it answers TOPIC_DELETION_DISABLED.',
    {
      support: 'honoured',
    },
  ),
  key(
    'replica.lag.time.max.ms',
    T.LONG,
    '30000',
    'high',
    'A follower that has not caught up to the leader for this long leaves the ISR.',
    {
      support: 'honoured',
    },
  ),
  key('replica.socket.timeout.ms', T.INT, '30000', 'high', 'Socket timeout of follower fetch connections.'),
  key(
    'replica.socket.receive.buffer.bytes',
    T.INT,
    '65536',
    'high',
    'SO_RCVBUF of follower fetch connections.',
  ),
  key(
    'replica.fetch.max.bytes',
    T.INT,
    '1048576',
    'medium',
    'Bytes a follower asks for per partition (the first batch is returned whole anyway).',
    {
      validator: atLeast(0),
    },
  ),
  key(
    'replica.fetch.response.max.bytes',
    T.INT,
    '10485760',
    'medium',
    'Bytes a follower asks for per fetch response.',
    {
      validator: atLeast(0),
    },
  ),
  key(
    'replica.fetch.wait.max.ms',
    T.INT,
    '500',
    'medium',
    'Longest a follower fetch waits at the leader; keep below replica.lag.time.max.ms.',
  ),
  key(
    'replica.fetch.min.bytes',
    T.INT,
    '1',
    'high',
    'Bytes a follower fetch waits for before the leader answers.',
  ),
  key('replica.fetch.backoff.ms', T.INT, '1000', 'medium', 'Pause after a follower fetch fails.', {
    validator: atLeast(0),
  }),
  key(
    'replica.high.watermark.checkpoint.interval.ms',
    T.LONG,
    '5000',
    'high',
    'How often high watermarks are written to replication-offset-checkpoint.',
    {
      support: 'honoured',
    },
  ),
  key(
    'replica.selector.class',
    T.STRING,
    null,
    'medium',
    'Chooses the replica a consumer fetches from (KIP-392); unset means the leader.',
    { support: 'honoured' },
  ),
  key('num.replica.fetchers', T.INT, '1', 'high', 'Fetcher sessions per source broker.', {
    updateMode: 'cluster-wide',
  }),
  key(
    'num.replica.alter.log.dirs.threads',
    T.INT,
    null,
    'high',
    'Kafka thread count for moving replicas between directories; ignored by Brook.',
    {
      support: 'no-op',
    },
  ),
  key(
    'auto.leader.rebalance.enable',
    T.BOOLEAN,
    'true',
    'high',
    'Periodically move leadership back to preferred replicas.',
  ),
  key(
    'leader.imbalance.per.broker.percentage',
    T.INT,
    '10',
    'high',
    'Share of non-preferred leaders on a broker that triggers a rebalance.',
  ),
  key(
    'leader.imbalance.check.interval.seconds',
    T.LONG,
    '300',
    'high',
    'How often the controller checks leader balance.',
    {
      validator: atLeast(1),
    },
  ),
  key(
    'controlled.shutdown.enable',
    T.BOOLEAN,
    'true',
    'medium',
    'Move leadership away before this broker shuts down.',
    {
      support: 'honoured',
    },
  ),
  key(
    'controlled.shutdown.max.retries',
    T.INT,
    '3',
    'medium',
    'Attempts at controlled shutdown before shutting down anyway.',
  ),
  key(
    'controlled.shutdown.retry.backoff.ms',
    T.LONG,
    '5000',
    'medium',
    'Pause between controlled shutdown attempts.',
  ),
  key(
    'controller.socket.timeout.ms',
    T.INT,
    '30000',
    'medium',
    'Socket timeout of controller-to-broker connections.',
  ),
  key(
    'fetch.max.bytes',
    T.INT,
    '57671680',
    'medium',
    'Most bytes one Fetch response may carry, whatever the client asks.',
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
    'Incremental fetch sessions (KIP-227) the broker keeps.',
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
    'Completed entries tolerated in the fetch purgatory before a purge.',
    {
      support: 'honoured',
    },
  ),
  key(
    'producer.purgatory.purge.interval.requests',
    T.INT,
    '1000',
    'medium',
    'Completed entries tolerated in the produce purgatory before a purge.',
    {
      support: 'honoured',
    },
  ),
  key(
    'delete.records.purgatory.purge.interval.requests',
    T.INT,
    '1',
    'medium',
    'Completed entries tolerated in the DeleteRecords purgatory before a purge.',
    {
      support: 'honoured',
    },
  ),
  key(
    'inter.broker.protocol.version',
    T.STRING,
    '3.9-IV0',
    'medium',
    'Inter-broker protocol level, reported for compatibility.',
  ),
];
