// Controller fencing, as Kafka's controller does it: every write of the controller goes into a multi that
// first checks the data version of /controller_epoch it saw when it became controller. A controller that lost
// its place (another one incremented the epoch) then fails with BADVERSION on its first write and nothing of it
// is applied.

import type { Op } from '../store/store.js';
import { CONTROLLER_EPOCH_PATH } from './paths.js';

/** `ops` preceded by the check of /controller_epoch's data version; failedOpIndex 0 then means "fenced". */
export function fencedOps(controllerEpochZkVersion: number, ops: readonly Op[]): Op[] {
  return [{ op: 'check', path: CONTROLLER_EPOCH_PATH, version: controllerEpochZkVersion }, ...ops];
}

/** Whether a failed fenced multi failed because this controller was fenced. */
export function wasFenced(failure: { readonly code: string; readonly failedOpIndex: number }): boolean {
  return failure.failedOpIndex === 0 && (failure.code === 'BADVERSION' || failure.code === 'NONODE');
}
