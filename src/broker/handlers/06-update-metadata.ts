// UpdateMetadata (6) from the controller over the wire: applied like the controller's direct call on its own broker
// (see cluster/controller-requests.ts).

import type {
  UpdateMetadataRequest,
  UpdateMetadataResponse,
} from '../../protocol/messages/06-update-metadata.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';

export const updateMetadataHandler = defineHandler<UpdateMetadataRequest, UpdateMetadataResponse>({
  apiKey: ApiKey.UPDATE_METADATA,
  minVersion: 0,
  maxVersion: 8,
  handle(context, request) {
    return context.services.controllerRequests.updateMetadata(request);
  },
});
