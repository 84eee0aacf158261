// One broker process and a wire client connected to it, shared by the tests of a describe block: started in the
// block's `before`, always stopped in its `after`, also when a test or the start itself fails.

import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { type BrokerProcess, type StartOptions, startBroker } from './broker-process.js';
import { WireClient } from './wire-client.js';

export interface BrokerSuite {
  readonly broker: BrokerProcess;
  readonly client: WireClient;
}

/**
 * Registers the block's `before` and `after`; the answer's fields are usable from the tests on. `setUp` runs
 * once both are up (topics the tests share, say).
 */
export function useBrokerWithClient(
  options: StartOptions = {},
  setUp?: (suite: BrokerSuite) => Promise<void>,
): BrokerSuite {
  let broker: BrokerProcess | undefined;
  let client: WireClient | undefined;
  const suite: BrokerSuite = {
    get broker() {
      assert.ok(broker, 'the broker is used before the suite started it');
      return broker;
    },
    get client() {
      assert.ok(client, 'the client is used before the suite connected it');
      return client;
    },
  };
  before(async () => {
    broker = await startBroker(options);
    client = await WireClient.connect(broker.host, broker.port);
    await setUp?.(suite);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });
  return suite;
}
