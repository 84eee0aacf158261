// SaslAuthenticate (36): one SASL token each way, after a SaslHandshake v1. A failure answers
// SASL_AUTHENTICATION_FAILED (or ILLEGAL_SASL_STATE) and closes the connection once the answer is written; the
// answer leaves after connection.failed.authentication.delay.ms, as in Kafka.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  SaslAuthenticateRequest,
  SaslAuthenticateResponse,
} from '../../protocol/messages/36-sasl-authenticate.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';

export const saslAuthenticateHandler = defineHandler<SaslAuthenticateRequest, SaslAuthenticateResponse>({
  apiKey: ApiKey.SASL_AUTHENTICATE,
  minVersion: 0,
  maxVersion: 2,
  async handle(context, request) {
    // The token is copied: the request frame may go back to the pool while the credential lookup waits.
    const token = Buffer.from(request.authBytes);
    const sasl = context.services.sasl;
    const answer = await sasl.authenticate(context.connection, token);
    // The authenticator has closed the connection; the failure is answered after
    // connection.failed.authentication.delay.ms, as Kafka (KIP-306).
    if (answer.close) await sasl.failureDelay();
    return {
      errorCode: ErrorCode[answer.errorCode],
      errorMessage: answer.errorMessage,
      authBytes: answer.authBytes,
      sessionLifetimeMs: BigInt(answer.sessionLifetimeMs),
    };
  },
});
