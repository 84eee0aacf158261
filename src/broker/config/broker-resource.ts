// Which broker config layer a BROKER resource name addresses: "" is the cluster-wide default layer, this
// broker's id is its per-broker layer, and anything else is refused with INVALID_REQUEST, as Kafka does.

import { ConfigErrorCode } from './config-error-codes.js';

export type BrokerResource =
  | { readonly ok: true; readonly perBroker: boolean }
  | { readonly ok: false; readonly errorCode: ConfigErrorCode; readonly errorMessage: string };

/**
 * `alteration`: the resource of an AlterConfigs or IncrementalAlterConfigs request, which Kafka refuses in
 * ConfigAdminManager's words rather than in ConfigHelper's (DescribeConfigs).
 */
export function brokerResource(resourceName: string, brokerId: number, alteration = false): BrokerResource {
  if (resourceName === '') return { ok: true, perBroker: false };
  if (!/^-?\d+$/.test(resourceName)) {
    return {
      ok: false,
      errorCode: ConfigErrorCode.INVALID_REQUEST,
      errorMessage: `${alteration ? 'Node' : 'Broker'} id must be an integer, but it is: ${resourceName}`,
    };
  }
  if (Number(resourceName) !== brokerId) {
    const expected = alteration ? `${brokerId},` : `${brokerId} or empty string,`;
    return {
      ok: false,
      errorCode: ConfigErrorCode.INVALID_REQUEST,
      errorMessage: `Unexpected broker id, expected ${expected} but received ${resourceName}`,
    };
  }
  return { ok: true, perBroker: true };
}
