// listener.name.<listener>.max.connections through a broker process: as Kafka's ConnectionQuotas, a connection
// beyond the listener's own bound waits, unread, until one of the listener's connections closes, and is then served.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { WireClient } from '../helpers/wire-client.js';

const LISTENER_BOUND = 3;

/** Whether a response frame arrives within `ms` (the frame is left undecoded). */
async function answered(client: WireClient, ms: number): Promise<boolean> {
  try {
    await client.raw.nextFrame(ms);
    return true;
  } catch {
    return false;
  }
}

describe('listener.name.<listener>.max.connections', () => {
  let broker: BrokerProcess;
  const clients: WireClient[] = [];

  before(async () => {
    broker = await startBroker({ overrides: { 'listener.name.plaintext.max.connections': LISTENER_BOUND } });
  });
  after(async () => {
    for (const c of clients) c.close();
    await broker?.stop();
  });

  it('holds a connection beyond the listener bound until one of its connections closes', async () => {
    let waiting: WireClient | null = null;
    // The broker's own connections on the listener, if any, take slots too: connect until one waits.
    for (let i = 0; i <= LISTENER_BOUND && waiting === null; i++) {
      const client = await WireClient.connect(broker.host, broker.port);
      clients.push(client);
      client.send(ApiKey.API_VERSIONS, 0, {});
      if (!(await answered(client, 500))) waiting = client;
    }
    assert.ok(waiting !== null, `a connection beyond ${LISTENER_BOUND} on the listener waits`);
    clients[0]!.close();
    assert.equal(await answered(waiting, 5_000), true, 'served once a connection of the listener closes');
  });
});
