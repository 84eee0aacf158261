// ApiVersions (18): what this broker implements, from the handler table, so that what is advertised is exactly
// what is handled. Versions newer than ours are answered by the dispatcher with UNSUPPORTED_VERSION.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  ApiVersionsRequest,
  ApiVersionsResponse,
  ApiVersionsResponseApiVersion,
} from '../../protocol/messages/18-api-versions.js';
import { ApiKey } from '../../protocol/registry.js';
import type { SaslAuthenticator } from '../../security/sasl/authenticator.js';
import { type ApiHandler, defineHandler } from '../api-handler.js';

/** Kafka's rule for client software names and versions (KIP-511). */
const SOFTWARE_PATTERN = /^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$/;

export function advertisedApiVersions(handlers: readonly ApiHandler[]): ApiVersionsResponseApiVersion[] {
  return handlers
    .map((h) => ({ apiKey: h.apiKey, minVersion: h.minVersion, maxVersion: h.maxVersion }))
    .sort((a, b) => a.apiKey - b.apiKey);
}

export const apiVersionsHandler = defineHandler<ApiVersionsRequest, ApiVersionsResponse>({
  apiKey: ApiKey.API_VERSIONS,
  minVersion: 0,
  maxVersion: 4,
  handle(context, request) {
    if (context.services.sasl.refusesDuringAuthentication(context.connection, 'ApiVersions')) {
      return refusedDuringAuthentication(context.services.sasl);
    }
    const valid =
      context.apiVersion < 3 ||
      (SOFTWARE_PATTERN.test(request.clientSoftwareName) &&
        SOFTWARE_PATTERN.test(request.clientSoftwareVersion));
    if (valid) context.connection.security.noteApiVersionsAnswered();
    return {
      errorCode: valid ? ErrorCode.NONE : ErrorCode.INVALID_REQUEST,
      apiKeys: context.services.apiVersions,
      throttleTimeMs: 0,
      supportedFeatures: [],
      finalizedFeaturesEpoch: -1n,
      finalizedFeatures: [],
      zkMigrationReady: false,
    };
  },
});

/**
 * ApiVersions after a SaslHandshake v1, while the client should be sending SaslAuthenticate: Kafka answers
 * ILLEGAL_SASL_STATE with no APIs listed (its error response names versions only for UNSUPPORTED_VERSION) and
 * closes the connection; the answer waits connection.failed.authentication.delay.ms as any authentication failure.
 */
async function refusedDuringAuthentication(sasl: SaslAuthenticator): Promise<ApiVersionsResponse> {
  await sasl.failureDelay();
  return {
    errorCode: ErrorCode.ILLEGAL_SASL_STATE,
    apiKeys: [],
    throttleTimeMs: 0,
    supportedFeatures: [],
    finalizedFeaturesEpoch: -1n,
    finalizedFeatures: [],
    zkMigrationReady: false,
  };
}
