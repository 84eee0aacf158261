// The cluster id, the controller registration and the controller epoch, in Kafka's formats.
//
// /cluster/id        {"version":"1","id":"<22-character cluster id>"}   (Kafka writes this version as a string)
// /controller        {"version":2,"brokerid":1,"timestamp":"1690000000000","kraftControllerEpoch":-1}
//                    ephemeral: whoever creates it is the controller. Version 1 lacks kraftControllerEpoch.
// /controller_epoch  the epoch as decimal text, e.g. "7"; its znode version fences a stale controller's writes.

import type { BrokerId } from '../../common/ids.js';
import {
  type Decoded,
  decodeJson,
  decodeText,
  encodeJson,
  LayoutDecodeError,
  parseIntegerText,
} from './json.js';

export function encodeClusterId(clusterId: string): Uint8Array {
  return encodeJson({ version: '1', id: clusterId });
}

export function decodeClusterId(bytes: Uint8Array): Decoded<string> {
  return decodeJson('cluster id', bytes, (json) => {
    json.version([1]);
    const id = json.string('id');
    if (id.length === 0) json.fail('id', 'is empty');
    return id;
  });
}

export interface ControllerRegistration {
  readonly brokerId: BrokerId;
  readonly timestampMs: number;
  /** -1 for a ZooKeeper-mode controller; only KRaft migration writes another value. */
  readonly kraftControllerEpoch: number;
}

export function encodeController(registration: ControllerRegistration): Uint8Array {
  return encodeJson({
    version: 2,
    brokerid: registration.brokerId,
    timestamp: String(registration.timestampMs),
    kraftControllerEpoch: registration.kraftControllerEpoch,
  });
}

export function decodeController(bytes: Uint8Array): Decoded<ControllerRegistration> {
  return decodeJson('controller', bytes, (json) => {
    json.version([1, 2]);
    return {
      brokerId: json.int('brokerid', { min: 0 }) as BrokerId,
      timestampMs: json.has('timestamp') ? json.integerString('timestamp') : -1,
      kraftControllerEpoch: json.intOr('kraftControllerEpoch', -1, { min: -1 }),
    };
  });
}

export function encodeControllerEpoch(epoch: number): Uint8Array {
  return new TextEncoder().encode(String(epoch));
}

export function decodeControllerEpoch(bytes: Uint8Array): Decoded<number> {
  return decodeText('controller epoch', bytes, (text) => {
    const epoch = parseIntegerText('controller epoch', 'epoch', text);
    if (epoch < 0 || epoch > 0x7fffffff)
      throw new LayoutDecodeError('controller epoch', `epoch ${epoch} is out of range`);
    return epoch;
  });
}
