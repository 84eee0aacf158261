// WriteTxnMarkers (27): from a transaction coordinator to the leaders of a transaction's partitions; each
// marker is appended as a leader append (see src/broker/txn/txn-markers.ts) and answered once replicated.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  WriteTxnMarkersRequest,
  WriteTxnMarkersResponse,
} from '../../protocol/messages/27-write-txn-markers.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import { appendMarker } from '../txn/txn-markers.js';

export const writeTxnMarkersHandler = defineHandler<WriteTxnMarkersRequest, WriteTxnMarkersResponse>({
  apiKey: ApiKey.WRITE_TXN_MARKERS,
  minVersion: 0,
  maxVersion: 1,
  async handle(context, request) {
    // From a transaction coordinator: CLUSTER_ACTION, else every partition is CLUSTER_AUTHORIZATION_FAILED.
    const allowed = authorizeCluster(context, AclOperation.CLUSTER_ACTION);
    const markers = await Promise.all(
      request.markers.map(async (m) => ({
        producerId: m.producerId,
        topics: await Promise.all(
          m.topics.map(async (t) => ({
            name: t.name,
            partitions: await Promise.all(
              t.partitionIndexes.map(async (p) => ({
                partitionIndex: p,
                errorCode: !allowed
                  ? ErrorCode.CLUSTER_AUTHORIZATION_FAILED
                  : await appendMarker(context.services, t.name, p, {
                      producerId: Number(m.producerId),
                      producerEpoch: m.producerEpoch,
                      commit: m.transactionResult,
                      coordinatorEpoch: m.coordinatorEpoch,
                    }).catch(() => ErrorCode.UNKNOWN_SERVER_ERROR),
              })),
            ),
          })),
        ),
      })),
    );
    return { markers };
  },
});
