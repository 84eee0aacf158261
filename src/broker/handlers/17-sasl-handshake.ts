// SaslHandshake (17): the client names a SASL mechanism; src/security/sasl decides. v0 is followed by bare
// tokens, v1 by SaslAuthenticate requests. Refusals close the connection once the answer is written, as Kafka.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  SaslHandshakeRequest,
  SaslHandshakeResponse,
} from '../../protocol/messages/17-sasl-handshake.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';

export const saslHandshakeHandler = defineHandler<SaslHandshakeRequest, SaslHandshakeResponse>({
  apiKey: ApiKey.SASL_HANDSHAKE,
  minVersion: 0,
  maxVersion: 1,
  handle(context, request) {
    const answer = context.services.sasl.handshake(context.connection, context.apiVersion, request.mechanism);
    if (answer.close) context.connection.closeAfterResponses(`SaslHandshake: ${answer.errorCode}`);
    return { errorCode: ErrorCode[answer.errorCode], mechanisms: [...answer.mechanisms] };
  },
});
