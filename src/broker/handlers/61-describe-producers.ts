// DescribeProducers (61): the idempotent and transactional producers a partition leader knows, with their
// epoch, last sequence and timestamp, and the first offset of an open transaction (kafka-transactions.sh and
// the admin client's describeProducers use it to find hanging transactions).

import { ErrorCode } from '../../protocol/errors.js';
import type {
  DescribeProducersRequest,
  DescribeProducersResponse,
  DescribeProducersResponsePartitionResponse,
} from '../../protocol/messages/61-describe-producers.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeTopic } from '../authorization.js';
import { leaderPartition } from '../replica/leader-lookup.js';

export const describeProducersHandler = defineHandler<DescribeProducersRequest, DescribeProducersResponse>({
  apiKey: ApiKey.DESCRIBE_PRODUCERS,
  minVersion: 0,
  maxVersion: 0,
  handle(context, request) {
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => {
        // Kafka's check: READ on the topic.
        const allowed = authorizeTopic(context, AclOperation.READ, t.name);
        return {
          name: t.name,
          partitions: t.partitionIndexes.map((index): DescribeProducersResponsePartitionResponse => {
            if (!allowed) {
              const errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
              return { partitionIndex: index, errorCode, errorMessage: null, activeProducers: [] };
            }
            const partition = leaderPartition(context.services, t.name, index);
            if (typeof partition === 'number') {
              return { partitionIndex: index, errorCode: partition, errorMessage: null, activeProducers: [] };
            }
            const activeProducers = [];
            for (const p of partition.log.producerState.allProducers()) {
              activeProducers.push({
                producerId: BigInt(p.producerId),
                producerEpoch: p.producerEpoch,
                lastSequence: p.batches[p.batches.length - 1]?.lastSeq ?? -1,
                lastTimestamp: BigInt(p.lastTimestampMs),
                coordinatorEpoch: p.coordinatorEpoch,
                currentTxnStartOffset: BigInt(p.currentTxnFirstOffset),
              });
            }
            return { partitionIndex: index, errorCode: ErrorCode.NONE, errorMessage: null, activeProducers };
          }),
        };
      }),
    };
  },
});
