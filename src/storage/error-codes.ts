// The Kafka error codes that storage returns as values. The protocol module owns the full table; these few are
// repeated here with Kafka's numbers so that storage does not depend on more of the protocol than it needs.

export const StorageErrorCode = {
  None: 0,
  OffsetOutOfRange: 1,
  CorruptMessage: 2,
  MessageTooLarge: 10,
  OutOfOrderSequenceNumber: 45,
  InvalidProducerEpoch: 47,
  InvalidTxnState: 48,
  TransactionCoordinatorFenced: 52,
  KafkaStorageError: 56,
} as const;

export type StorageErrorCode = (typeof StorageErrorCode)[keyof typeof StorageErrorCode];
