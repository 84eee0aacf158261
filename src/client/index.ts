// Public surface of Brook's client: Producer, Consumer, Admin, serializers, partitioners and errors.

export type {
  AdminCallOptions,
  AdminOptions,
  ConfigEntry,
  ConfigOp,
  ConfigResourceResult,
  ConfigResourceType,
  CreateTopicResult,
  GroupDescription,
  GroupOffset,
  ListedOffset,
  ListOffsetsOptions,
  NewTopic,
  OffsetSpec,
  PartitionResult,
  TopicDescription,
} from './admin.js';
export { Admin } from './admin.js';
export {
  ASSIGNORS,
  type Assignment,
  type AssignmentGeneration,
  type AssignorCluster,
  type AssignorName,
  type ConsumerPartitionAssignor,
  type GroupAssignment,
  type GroupSubscription,
  type MemberSubscription,
  type Subscription,
  toConsumerPartitionAssignor,
} from './assignors.js';
export { type BrokerInfo, Cluster, type PartitionInfo, type TopicInfo } from './cluster.js';
export { Connection } from './connection.js';
export {
  type CommittedOffsetAndMetadata,
  Consumer,
  type ConsumerOptions,
  type ConsumerRecord,
  type IsolationLevel,
  type OffsetResetPolicy,
  type OffsetToCommit,
  type RunOptions,
} from './consumer.js';
export {
  CallTimeoutError,
  ClientStateError,
  ConfigError,
  ConnectionError,
  DeliveryTimeoutError,
  KafkaClientError,
  KafkaProtocolError,
  LogTruncationError,
  NoOffsetForPartitionError,
  OffsetOutOfRangeError,
  type OffsetWithEpoch,
  RequestTimeoutError,
  TransactionAbortedError,
} from './errors.js';
export type { RebalanceListener } from './group.js';
export {
  type GenerationInfo,
  GroupMembership,
  type GroupMembershipOptions,
  type JoinedMember,
} from './group-membership.js';
export {
  type ClientCredentialsOptions,
  clientCredentialsTokenProvider,
  type UnsecuredTokenOptions,
  unsecuredToken,
  unsecuredTokenProvider,
} from './oauth-token.js';
export type {
  ClientOptions,
  OAuthBearerSaslOptions,
  PasswordSaslOptions,
  SaslOptions,
} from './options.js';
export {
  createPartitioner,
  keyPartition,
  murmur2,
  type PartitionerFn,
  type PartitionerName,
} from './partitioners.js';
export {
  type Acks,
  type CompressionName,
  Producer,
  type ProducerOptions,
  type ProducerRecord,
  type RecordMetadata,
} from './producer.js';
export type { OffsetAnswer, TopicPartition } from './requests.js';
export * from './serdes.js';
export type { ConsumerGroupMetadata, TransactionOffset, TransactionState } from './transactions.js';
