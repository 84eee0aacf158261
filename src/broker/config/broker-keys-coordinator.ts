// Broker keys for the group and transaction coordinators and their internal topics (__consumer_offsets,
// __transaction_state), and for producer id state. Kafka 3.9 names, types, defaults and update modes; Brook's
// own doc lines.

import { ConfigType as T } from './config-types.js';
import { INT_MAX_TEXT, defineKey as key } from './define-key.js';
import { atLeast, listOf } from './validators.js';

const honoured = { support: 'honoured' } as const;
const positive = { validator: atLeast(1), support: 'honoured' } as const;

export const COORDINATOR_KEYS = [
  // __consumer_offsets and committed offsets.
  key(
    'offsets.topic.num.partitions',
    T.INT,
    '50',
    'high',
    'Number of partitions of __consumer_offsets; it cannot change once the topic exists.',
    positive,
  ),
  key(
    'offsets.topic.replication.factor',
    T.SHORT,
    '3',
    'high',
    'Replication factor of __consumer_offsets; creating it fails until this many brokers are alive.',
    positive,
  ),
  key(
    'offsets.topic.segment.bytes',
    T.INT,
    '104857600',
    'high',
    'Segment size, in bytes, of __consumer_offsets, kept small so that compaction and loading are fast.',
    positive,
  ),
  key(
    'offsets.topic.compression.codec',
    T.INT,
    '0',
    'high',
    'Compression codec of offset commit writes, by number: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd.',
    honoured,
  ),
  key(
    'offsets.load.buffer.size',
    T.INT,
    '5242880',
    'high',
    'Bytes read at a time when a group coordinator loads __consumer_offsets into its cache.',
    positive,
  ),
  key(
    'offsets.retention.minutes',
    T.INT,
    '10080',
    'high',
    "Time, in minutes, a group's committed offsets are kept after the group becomes empty (for a " +
      'consumer without a group, after its last commit) before they are deleted.',
    positive,
  ),
  key(
    'offsets.retention.check.interval.ms',
    T.LONG,
    '600000',
    'high',
    'How often, in milliseconds, expired committed offsets are looked for and removed.',
    positive,
  ),
  key(
    'offsets.commit.timeout.ms',
    T.INT,
    '5000',
    'high',
    'Longest time, in milliseconds, an offset commit waits for every replica of __consumer_offsets ' +
      'to hold it before it is answered.',
    positive,
  ),
  key(
    'offsets.commit.required.acks',
    T.SHORT,
    '-1',
    'high',
    'Deprecated: acknowledgements an offset commit write needs; keep the default -1.',
  ),
  key(
    'offset.metadata.max.bytes',
    T.INT,
    '4096',
    'high',
    'Largest metadata string, in bytes, a committed offset may carry.',
    honoured,
  ),

  // Consumer groups.
  key(
    'group.initial.rebalance.delay.ms',
    T.INT,
    '3000',
    'medium',
    'Time, in milliseconds, the coordinator waits for more members to join an empty classic group ' +
      'before its first rebalance: longer means fewer rebalances and a later start.',
    honoured,
  ),
  key(
    'group.min.session.timeout.ms',
    T.INT,
    '6000',
    'medium',
    'Smallest session timeout, in milliseconds, a classic group member may ask for; shorter ones ' +
      'detect failures sooner with more frequent heartbeats.',
    honoured,
  ),
  key(
    'group.max.session.timeout.ms',
    T.INT,
    '1800000',
    'medium',
    'Largest session timeout, in milliseconds, a classic group member may ask for; longer ones give ' +
      'members more time between heartbeats.',
    honoured,
  ),
  key(
    'group.max.size',
    T.INT,
    INT_MAX_TEXT,
    'medium',
    'Most members of one classic group; a member beyond it gets GROUP_MAX_SIZE_REACHED.',
    positive,
  ),
  key(
    'group.coordinator.rebalance.protocols',
    T.LIST,
    'classic',
    'medium',
    'Group protocols the coordinator serves, a list of classic and consumer (the KIP-848 consumer ' +
      'group protocol).',
    {
      validator: listOf(['classic', 'consumer']),
      support: 'honoured',
    },
  ),
  key(
    'group.consumer.session.timeout.ms',
    T.INT,
    '45000',
    'medium',
    'Session timeout, in milliseconds, of members of KIP-848 consumer groups.',
    positive,
  ),
  key(
    'group.consumer.min.session.timeout.ms',
    T.INT,
    '45000',
    'medium',
    'Smallest session timeout, in milliseconds, of members of KIP-848 consumer groups.',
    positive,
  ),
  key(
    'group.consumer.max.session.timeout.ms',
    T.INT,
    '60000',
    'medium',
    'Largest session timeout, in milliseconds, of members of KIP-848 consumer groups.',
    positive,
  ),
  key(
    'group.consumer.heartbeat.interval.ms',
    T.INT,
    '5000',
    'medium',
    'Heartbeat interval, in milliseconds, the coordinator gives members of KIP-848 consumer groups.',
    positive,
  ),
  key(
    'group.consumer.min.heartbeat.interval.ms',
    T.INT,
    '5000',
    'medium',
    'Smallest heartbeat interval, in milliseconds, of members of KIP-848 consumer groups.',
    positive,
  ),
  key(
    'group.consumer.max.heartbeat.interval.ms',
    T.INT,
    '15000',
    'medium',
    'Largest heartbeat interval, in milliseconds, of members of KIP-848 consumer groups.',
    positive,
  ),
  key(
    'group.consumer.max.size',
    T.INT,
    INT_MAX_TEXT,
    'medium',
    'Most members of one KIP-848 consumer group; a member beyond it gets GROUP_MAX_SIZE_REACHED.',
    positive,
  ),

  // Transactions and producer ids.
  key(
    'transaction.state.log.num.partitions',
    T.INT,
    '50',
    'high',
    'Number of partitions of __transaction_state; it cannot change once the topic exists.',
    positive,
  ),
  key(
    'transaction.state.log.replication.factor',
    T.SHORT,
    '3',
    'high',
    'Replication factor of __transaction_state; creating it fails until this many brokers are alive.',
    positive,
  ),
  key(
    'transaction.state.log.min.isr',
    T.INT,
    '2',
    'high',
    'min.insync.replicas of __transaction_state.',
    positive,
  ),
  key(
    'transaction.state.log.segment.bytes',
    T.INT,
    '104857600',
    'high',
    'Segment size, in bytes, of __transaction_state, kept small so that compaction and loading are ' +
      'fast.',
    positive,
  ),
  key(
    'transaction.state.log.load.buffer.size',
    T.INT,
    '5242880',
    'high',
    'Bytes read at a time when a transaction coordinator loads __transaction_state into its cache.',
    positive,
  ),
  key(
    'transaction.max.timeout.ms',
    T.INT,
    '900000',
    'high',
    'Largest transaction timeout, in milliseconds, a producer may ask for; a larger one gets ' +
      'INVALID_TRANSACTION_TIMEOUT, so that no transaction holds read_committed consumers back for too ' +
      'long.',
    positive,
  ),
  key(
    'transactional.id.expiration.ms',
    T.INT,
    '604800000',
    'high',
    'Time, in milliseconds, after which the coordinator forgets a transactional id whose ' +
      'transactions have not changed state; an ongoing transaction keeps it alive.',
    positive,
  ),
  key(
    'transaction.abort.timed.out.transaction.cleanup.interval.ms',
    T.INT,
    '10000',
    'low',
    'How often, in milliseconds, the coordinator aborts transactions that have run past their timeout.',
    positive,
  ),
  key(
    'transaction.remove.expired.transaction.cleanup.interval.ms',
    T.INT,
    '3600000',
    'low',
    'How often, in milliseconds, the coordinator removes transactional ids past ' +
      'transactional.id.expiration.ms.',
    positive,
  ),
  key(
    'transaction.partition.verification.enable',
    T.BOOLEAN,
    'true',
    'low',
    'Whether a partition leader checks with the transaction coordinator that a partition was added ' +
      'to the transaction before it appends transactional records there (KIP-890); a partition not added ' +
      'is answered TRANSACTION_ABORTABLE (Produce v11+) or INVALID_TXN_STATE (older producers).',
    {
      updateMode: 'cluster-wide',
      support: 'honoured',
    },
  ),
  key(
    'producer.id.expiration.ms',
    T.INT,
    '86400000',
    'low',
    'Time, in milliseconds, a partition leader keeps the state of a producer id it has not heard ' +
      "from; an ongoing transaction keeps it, and retention deleting the producer's last write may end " +
      'it sooner.',
    {
      validator: atLeast(1),
      updateMode: 'cluster-wide',
      support: 'honoured',
    },
  ),
  key(
    'producer.id.expiration.check.interval.ms',
    T.INT,
    '600000',
    'low',
    'How often, in milliseconds, expired producer ids are removed.',
    positive,
  ),
];
