// DescribeCluster (60): cluster id, controller and live brokers, the admin client's view of the cluster.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  DescribeClusterRequest,
  DescribeClusterResponse,
} from '../../protocol/messages/60-describe-cluster.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { clusterAuthorizedOperations } from '../authorization.js';
import { AUTHORIZED_OPERATIONS_OMITTED } from '../authorized-operations.js';

/** endpoint_type 1 asks for brokers (2, controllers, is a KRaft notion). */
const ENDPOINT_TYPE_BROKERS = 1;

export const describeClusterHandler = defineHandler<DescribeClusterRequest, DescribeClusterResponse>({
  apiKey: ApiKey.DESCRIBE_CLUSTER,
  minVersion: 0,
  maxVersion: 1,
  handle(context, request) {
    const { metadata } = context.services;
    const base = {
      throttleTimeMs: 0,
      endpointType: request.endpointType,
      clusterId: metadata.clusterId,
      controllerId: metadata.controllerId,
    };
    if (request.endpointType !== ENDPOINT_TYPE_BROKERS) {
      // As Kafka, a refused request leaves the authorized operations at their default, asking nothing.
      return {
        ...base,
        clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
        errorCode: ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
        errorMessage: 'Only broker endpoints are available.',
        brokers: [],
      };
    }
    const brokers = [];
    for (const b of metadata.aliveBrokers()) {
      const e = b.endpoints.find((x) => x.listenerName === context.listenerName);
      if (e !== undefined) brokers.push({ brokerId: b.id, host: e.host, port: e.port, rack: b.rack });
    }
    return {
      ...base,
      clusterAuthorizedOperations: clusterAuthorizedOperations(
        context,
        request.includeClusterAuthorizedOperations,
      ),
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      brokers,
    };
  },
});
