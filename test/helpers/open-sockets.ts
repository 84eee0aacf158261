// Client sockets this process still holds to a broker: what tests of clean shutdown count (a client left open keeps
// the process alive). Reads Node's undocumented process._getActiveHandles(), the only list of live sockets.

import { Socket } from 'node:net';
import { sleep } from './wait.js';

/** Client sockets of this process to the broker's port not closed yet (the broker's own have it as local port). */
export function openClientSockets(port: number): number {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter((h) => h instanceof Socket && h.remotePort === port && !h.destroyed).length;
}

/** Waits up to 3 s for every client socket to the broker to close; the count left open. */
export async function socketsLeftOpen(port: number): Promise<number> {
  const deadline = Date.now() + 3_000;
  while (openClientSockets(port) > 0 && Date.now() < deadline) await sleep(100);
  return openClientSockets(port);
}
