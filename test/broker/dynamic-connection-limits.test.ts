// max.connections.per.ip changed over the wire on the cluster-default broker resource (Kafka marks it, with
// max.connections and max.connections.per.ip.overrides, cluster-wide dynamic): a running broker counts new
// connections against the new limit at once. With the static default (2^31 - 1) every connection below is
// accepted; after the change to 2 a third connection from 127.0.0.1 is closed, and after the key is deleted
// again connections are accepted again.

import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { alterConfigs, CLUSTER_DEFAULT } from '../helpers/dynamic-configs.js';
import { WireClient } from '../helpers/wire-client.js';

/** Opens a raw TCP connection; answers it and a promise that settles when the broker (or anyone) closes it. */
function connect(port: number): Promise<{ socket: net.Socket; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('error', () => {});
    socket.once('connect', () => resolve({ socket, closed }));
    socket.once('close', () => reject(new Error('closed before connecting')));
  });
}

// ApiVersions v0 (key 18) with correlation id 1 and a null client id, size-prefixed: any broker answers it.
const API_VERSIONS_V0 = Buffer.from([0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 1, 0xff, 0xff]);

/**
 * Whether the broker refuses a new connection: it decides when it accepts, and closes a refused connection
 * unread, while an accepted one answers ApiVersions. Waits for one or the other (not for a fixed time); an
 * accepted connection is kept open in `held`, where it counts against the limit.
 */
async function refused(port: number, held: net.Socket[]): Promise<boolean> {
  const { socket, closed } = await connect(port);
  const answered = new Promise<'answered'>((r) => socket.once('data', () => r('answered')));
  socket.write(API_VERSIONS_V0);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'neither'>((r) => {
    timer = setTimeout(() => r('neither'), 30_000);
  });
  const outcome = await Promise.race([closed.then(() => 'closed' as const), answered, deadline]);
  clearTimeout(timer);
  if (outcome === 'closed') return true;
  held.push(socket);
  assert.equal(outcome, 'answered', 'a new connection neither closed nor answered within 30 s');
  return false;
}

describe('dynamic connection limits over the wire', () => {
  let broker: BrokerProcess;
  const held: net.Socket[] = [];

  before(async () => {
    broker = await startBroker({});
  });
  after(async () => {
    for (const s of held) s.destroy();
    await broker?.stop();
  });

  async function alterDefault(value: string | null): Promise<void> {
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      await alterConfigs(client, CLUSTER_DEFAULT, { 'max.connections.per.ip': value });
    } finally {
      client.close();
    }
  }

  it('max.connections.per.ip set on the cluster default applies to new connections, and its removal too', async () => {
    for (let i = 0; i < 3; i++) assert.equal(await refused(broker.port, held), false, 'no limit yet');
    for (const s of held.splice(0)) s.destroy();

    await alterDefault('2');
    // The broker reloads its layers on the change notification: until then connections are still accepted.
    const accepted = await waitFor(
      'a connection over max.connections.per.ip=2 refused',
      async () => {
        const mine: net.Socket[] = [];
        try {
          for (let i = 0; i < 4; i++) if (await refused(broker.port, mine)) return mine.length;
          return undefined;
        } finally {
          for (const s of mine) s.destroy();
        }
      },
      60_000,
    );
    assert.ok(accepted <= 2, `${accepted} connections accepted before the refusal`);
    assert.match(broker.log(), /rejecting connection: max\.connections\.per\.ip reached/);

    // Its own connection counts too: retried until the closed ones above are released.
    await waitFor(
      'the key deleted',
      async () => {
        await alterDefault(null);
        return true;
      },
      60_000,
    );
    await waitFor(
      'three connections accepted again once the key is deleted',
      async () => {
        const mine: net.Socket[] = [];
        try {
          for (let i = 0; i < 3; i++) if (await refused(broker.port, mine)) return undefined;
          return true;
        } finally {
          for (const s of mine) s.destroy();
        }
      },
      60_000,
    );
  });
});
