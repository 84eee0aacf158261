// SaslHandshake (17): the client names a SASL mechanism; src/security/sasl decides. v0 is followed by bare
// tokens, v1 by SaslAuthenticate requests. Refusals close the connection once the answer is written, as Kafka,
// and the answer leaves after connection.failed.authentication.delay.ms.

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
  async handle(context, request) {
    const sasl = context.services.sasl;
    const answer = sasl.handshake(context.connection, context.apiVersion, request.mechanism);
    // The authenticator has closed the connection; the refusal is answered after
    // connection.failed.authentication.delay.ms, as Kafka (KIP-306).
    if (answer.close) await sasl.failureDelay();
    return { errorCode: ErrorCode[answer.errorCode], mechanisms: [...answer.mechanisms] };
  },
});
