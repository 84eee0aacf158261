// UpdateMetadata (6) from the controller over the wire: applied like the controller's direct call on its own broker
// (see cluster/controller-requests.ts).

import { ErrorCode } from '../../protocol/errors.js';
import type {
  UpdateMetadataRequest,
  UpdateMetadataResponse,
} from '../../protocol/messages/06-update-metadata.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

export const updateMetadataHandler = defineHandler<UpdateMetadataRequest, UpdateMetadataResponse>({
  apiKey: ApiKey.UPDATE_METADATA,
  minVersion: 0,
  maxVersion: 8,
  handle(context, request) {
    if (!authorizeCluster(context, AclOperation.CLUSTER_ACTION)) {
      return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED };
    }
    return context.services.controllerRequests.updateMetadata(request);
  },
});
