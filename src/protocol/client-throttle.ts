// From which version of each API a response's throttle_time_ms tells the client to wait before sending to that
// broker again (Kafka's AbstractResponse.shouldClientThrottle, KIP-219). Before it, the broker delayed the
// response itself and the field only reported that delay. Shared by the broker (how to throttle) and the client
// (whether to wait).

const CLIENT_THROTTLES_FROM: Readonly<Record<number, number>> = {
  0: 6,
  1: 8,
  2: 3,
  3: 6,
  8: 4,
  9: 4,
  10: 2,
  11: 3,
  12: 2,
  13: 2,
  14: 2,
  15: 2,
  16: 2,
  18: 2,
  19: 3,
  20: 2,
  21: 1,
  22: 1,
  24: 1,
  25: 1,
  26: 1,
  28: 1,
  29: 1,
  30: 1,
  31: 1,
  32: 2,
  33: 1,
  34: 1,
  35: 1,
  37: 1,
  38: 1,
  39: 1,
  40: 1,
  41: 1,
  42: 1,
};

/** Whether a response of this API and version asks the client to honour its throttle_time_ms. */
export function clientShouldThrottle(apiKey: number, apiVersion: number): boolean {
  // APIs added after KIP-219 (AlterPartitionReassignments, the SCRAM and quota APIs, ...) throttle from v0.
  return apiVersion >= (CLIENT_THROTTLES_FROM[apiKey] ?? 0);
}
