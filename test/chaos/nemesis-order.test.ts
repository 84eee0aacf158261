// The nemesis's timelines: a fault waits for the previous fault of its family to be healed (a slow restart must
// not be killed by the next process fault), while faults of other families still overlap it.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type FaultKind, playInFamilyOrder } from './nemesis.js';
import { sleep } from './nodes.js';

interface Fault {
  kind: FaultKind;
  atMs: number;
  name: string;
}

/** Plays faults whose own work (injection plus healing) takes `busyMs`; records when each begins and ends. */
async function play(plan: Fault[], busyMs: Record<string, number>): Promise<string[]> {
  const events: string[] = [];
  await playInFamilyOrder(plan, async (fault, previousHealed) => {
    await previousHealed;
    events.push(`begin ${fault.name}`);
    await sleep(busyMs[fault.name] ?? 0);
    events.push(`end ${fault.name}`);
  });
  return events;
}

describe('playInFamilyOrder', () => {
  it('starts a process fault only after the previous process fault has healed', async () => {
    const events = await play(
      [
        { kind: 'kill', atMs: 10, name: 'second-kill' },
        { kind: 'kill-controller', atMs: 0, name: 'first-kill' },
      ],
      { 'first-kill': 60, 'second-kill': 1 },
    );
    assert.deepEqual(events, ['begin first-kill', 'end first-kill', 'begin second-kill', 'end second-kill']);
  });

  it('lets a fault of another family run during a slow healing', async () => {
    const events = await play(
      [
        { kind: 'kill', atMs: 0, name: 'kill' },
        { kind: 'lossy-link', atMs: 5, name: 'link' },
      ],
      { kill: 60, link: 1 },
    );
    assert.deepEqual(events, ['begin kill', 'begin link', 'end link', 'end kill']);
  });

  it('frees the family when a fault fails, and reports the failure', async () => {
    const begun: string[] = [];
    const played = playInFamilyOrder(
      [
        { kind: 'pause', atMs: 0, name: 'fails' },
        { kind: 'kill', atMs: 1, name: 'after' },
      ],
      async (fault, previousHealed) => {
        await previousHealed;
        begun.push(fault.name);
        if (fault.name === 'fails') throw new Error('could not heal');
      },
    );
    await assert.rejects(played, /could not heal/);
    await sleep(5);
    assert.deepEqual(begun, ['fails', 'after']);
  });
});
