// Which broker config layer a BROKER resource name addresses: "" is the cluster-wide default layer, this
// broker's id is its per-broker layer, and anything else is refused with INVALID_REQUEST, as Kafka does.

import { ConfigErrorCode } from './config-error-codes.js';

export type BrokerResource =
  | { readonly ok: true; readonly perBroker: boolean }
  | { readonly ok: false; readonly errorCode: ConfigErrorCode; readonly errorMessage: string };

export function brokerResource(resourceName: string, brokerId: number): BrokerResource {
  if (resourceName === '') return { ok: true, perBroker: false };
  if (!/^-?\d+$/.test(resourceName)) {
    return {
      ok: false,
      errorCode: ConfigErrorCode.INVALID_REQUEST,
      errorMessage: `Broker id must be an integer, but it is: ${resourceName}`,
    };
  }
  if (Number(resourceName) !== brokerId) {
    return {
      ok: false,
      errorCode: ConfigErrorCode.INVALID_REQUEST,
      errorMessage: `Unexpected broker id, expected ${brokerId} or empty string, but received ${resourceName}`,
    };
  }
  return { ok: true, perBroker: true };
}
