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

/** endpoint_type (KIP-919): 1 asks for brokers, 2 for KRaft controllers, which only a controller answers. */
const ENDPOINT_TYPE_BROKERS = 1;
const ENDPOINT_TYPE_CONTROLLERS = 2;

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
      // As Kafka's AuthHelper.computeDescribeClusterResponse: controllers asked of a broker are the wrong endpoint
      // type (the admin client's MismatchedEndpointTypeException), any other type is unsupported; and the answer
      // carries nothing else, every field at its default (no cluster id, controller or authorized operations).
      const mismatched = request.endpointType === ENDPOINT_TYPE_CONTROLLERS;
      return {
        throttleTimeMs: 0,
        endpointType: ENDPOINT_TYPE_BROKERS,
        clusterId: '',
        controllerId: -1,
        clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
        errorCode: mismatched ? ErrorCode.MISMATCHED_ENDPOINT_TYPE : ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
        errorMessage: mismatched
          ? 'The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER'
          : `Unsupported endpoint type ${request.endpointType}`,
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
