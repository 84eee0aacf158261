// Kafka Connect's group protocol bytes (ConnectProtocol, IncrementalCooperativeConnectProtocol) and the leader's
// incremental cooperative assignment (KIP-415): spread, revocation of deleted work, the scheduled delay for a
// departed worker's work, a returning worker taking it, and the two-round balance when a worker joins.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RestError } from '../../src/connect/errors.js';
import {
  assignEager,
  assignIncremental,
  type LeaderMemory,
  type MemberInfo,
} from '../../src/connect/runtime/distributed/assignor.js';
import {
  type ConnectAssignment,
  decodeAssignment,
  decodeWorkerState,
  encodeAssignment,
  encodeWorkerState,
  offeredProtocols,
} from '../../src/connect/runtime/distributed/connect-protocol.js';
import {
  generateSessionKey,
  sign,
  signatureHeaders,
  verify,
} from '../../src/connect/runtime/distributed/request-signature.js';
import { loadWorkerConfig } from '../../src/connect/runtime/worker-config.js';

test('a version 1 assignment has Kafka’s layout, the connector as task -1, revoked null when empty', () => {
  const a: ConnectAssignment = {
    version: 1,
    error: 0,
    leader: 'l',
    leaderUrl: 'u',
    configOffset: 5,
    connectors: ['c'],
    tasks: [{ connector: 'c', task: 0 }],
    revoked: { connectors: [], tasks: [] },
    delayMs: 7,
  };
  const bytes = encodeAssignment(a);
  assert.equal(
    bytes.toString('hex'),
    [
      '0001', // version
      '0000', // error
      '00016c', // leader "l"
      '000175', // leader url "u"
      '0000000000000005', // config offset
      '00000001', // one connector assignment
      '000163', // "c"
      '00000002ffffffff00000000', // tasks [-1, 0]
      'ffffffff', // revoked: null
      '00000007', // delay
    ].join(''),
  );
  assert.deepEqual(decodeAssignment(bytes), a);
  // Version 0 (eager): no revoked, no delay.
  const v0 = encodeAssignment({ ...a, version: 0, delayMs: 0 });
  assert.equal(v0.length, bytes.length - 8);
  assert.deepEqual(decodeAssignment(v0).connectors, ['c']);
});

test('worker state: url and config offset, and from version 1 the current assignment as nullable bytes', () => {
  const v0 = encodeWorkerState(0, {
    url: 'http://w:8083/',
    configOffset: 12,
    assignment: { connectors: ['x'], tasks: [] },
  });
  assert.equal(
    v0.toString('hex'),
    `0000000e${Buffer.from('http://w:8083/').toString('hex')}000000000000000c`,
  );
  const empty = encodeWorkerState(2, {
    url: 'u',
    configOffset: 3,
    assignment: { connectors: [], tasks: [] },
  });
  assert.equal(empty.toString('hex'), '00020001750000000000000003ffffffff');
  const held = { connectors: ['a'], tasks: [{ connector: 'a', task: 1 }] };
  const s = decodeWorkerState(encodeWorkerState(1, { url: 'u', configOffset: 3, assignment: held }));
  assert.deepEqual(s, { version: 1, url: 'u', configOffset: 3, assignment: held });
  assert.deepEqual(offeredProtocols('sessioned'), ['sessioned', 'compatible', 'default']);
  assert.deepEqual(offeredProtocols('eager'), ['default']);
});

function member(id: string, owned: MemberInfo['owned'] = { connectors: [], tasks: [] }): MemberInfo {
  return { memberId: id, url: `http://${id}/`, configOffset: 0, owned };
}

function run(
  members: MemberInfo[],
  connectors: Record<string, number>,
  memory: LeaderMemory | null,
  nowMs: number,
) {
  return assignIncremental(
    'm1',
    'http://m1/',
    0,
    2,
    members,
    { connectors: new Map(Object.entries(connectors)) },
    memory,
    5000,
    nowMs,
  );
}

/** Applies assignments to members' holdings, as the workers do. */
function apply(members: MemberInfo[], plan: Map<string, ConnectAssignment>): MemberInfo[] {
  return members.map((m) => {
    const a = plan.get(m.memberId)!;
    const connectors = m.owned.connectors
      .filter((c) => !a.revoked.connectors.includes(c))
      .concat(a.connectors);
    const tasks = m.owned.tasks
      .filter((t) => !a.revoked.tasks.some((r) => r.connector === t.connector && r.task === t.task))
      .concat(a.tasks);
    return { ...m, owned: { connectors, tasks } };
  });
}

function load(m: MemberInfo): number {
  return m.owned.connectors.length + m.owned.tasks.length;
}

test('incremental cooperative assignment: spread, delay for a departed worker, then reassignment', () => {
  const work = { a: 1, b: 1, c: 1 };
  let members = [member('m1'), member('m2'), member('m3')];
  let r = run(members, work, null, 0);
  members = apply(members, r.assignments);
  assert.deepEqual(members.map(load), [2, 2, 2]);
  // m3 disappears: its units wait for the delay, everyone is told when to rejoin.
  const gone = members[2]!;
  members = members.slice(0, 2);
  r = run(members, work, r.memory, 1000);
  for (const a of r.assignments.values()) {
    assert.equal(a.delayMs, 5000);
    assert.equal(a.connectors.length + a.tasks.length, 0);
  }
  members = apply(members, r.assignments);
  // Still within the delay: nothing moves, the delay counts down.
  r = run(members, work, r.memory, 3000);
  assert.equal(r.assignments.get('m1')!.delayMs, 3000);
  // The delay is over: the survivors take the units.
  r = run(members, work, r.memory, 6001);
  members = apply(members, r.assignments);
  assert.equal(
    members.map(load).reduce((x, y) => x + y),
    6,
  );
  assert.ok(Math.max(...members.map(load)) - Math.min(...members.map(load)) <= 2);
  assert.equal(r.assignments.get('m1')!.delayMs, 0);
  // A worker joins: the most loaded give units up first (revoked only), and the next round hands them out.
  members.push(member('m4'));
  r = run(members, work, r.memory, 7000);
  const revoked = [...r.assignments.values()].reduce(
    (n, a) => n + a.revoked.connectors.length + a.revoked.tasks.length,
    0,
  );
  assert.ok(revoked > 0);
  assert.equal(load({ ...members[2]!, owned: r.assignments.get('m4')! }), 0);
  members = apply(members, r.assignments);
  r = run(members, work, r.memory, 7100);
  members = apply(members, r.assignments);
  assert.ok(load(members[2]!) > 0, 'the new worker runs something');
  assert.equal(
    members.map(load).reduce((x, y) => x + y),
    6,
  );
  void gone;
});

test('a worker back within the delay takes the lost units at once; deleted work is revoked', () => {
  const work = { a: 2, b: 1 };
  let members = [member('m1'), member('m2')];
  let r = run(members, work, null, 0);
  members = apply(members, r.assignments);
  const lostUnits = load(members[1]!);
  r = run([members[0]!], work, r.memory, 100);
  assert.equal(r.assignments.get('m1')!.delayMs, 5000);
  // m2 restarts (a new member id, nothing held): the lost units go to it, no more delay.
  r = run([members[0]!, member('m2b')], work, r.memory, 200);
  const back = r.assignments.get('m2b')!;
  assert.equal(back.connectors.length + back.tasks.length, lostUnits);
  assert.equal(back.delayMs, 0);
  // Connector b deleted: whoever runs it has it revoked.
  const holders = [
    members[0]!,
    { ...member('m2b'), owned: { connectors: back.connectors, tasks: back.tasks } },
  ];
  r = run(holders, { a: 2 }, r.memory, 300);
  const revoked = [...r.assignments.values()].flatMap((a) => [
    ...a.revoked.connectors,
    ...a.revoked.tasks.map((t) => t.connector),
  ]);
  assert.deepEqual(revoked.sort(), ['b', 'b']);
});

test('eager assignment hands every unit out round robin', () => {
  const plan = assignEager('m1', 'u', 3, [member('m1'), member('m2')], {
    connectors: new Map([
      ['a', 2],
      ['b', 1],
    ]),
  });
  assert.deepEqual(plan.get('m1')!.connectors, ['a']);
  assert.deepEqual(plan.get('m2')!.connectors, ['b']);
  assert.equal(plan.get('m1')!.tasks.length + plan.get('m2')!.tasks.length, 3);
  assert.equal(plan.get('m1')!.version, 0);
});

test('request signatures: HMAC as Kafka names it (RFC 4231 vector), Kafka 400/403 checks, worker key settings', () => {
  const jefe = Buffer.from('Jefe');
  const body = Buffer.from('what do ya want for nothing?');
  assert.equal(
    Buffer.from(sign(jefe, 'HmacSHA256', body), 'base64').toString('hex'),
    '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
  );
  const key = { key: jefe, algorithm: 'HmacSHA256', creationTimestamp: 0 };
  const headers = signatureHeaders(key, 'HmacSHA256', body);
  verify(
    {
      signature: headers['X-Connect-Authorization'],
      algorithm: headers['X-Connect-Request-Signature-Algorithm'],
      body,
    },
    key,
    ['HmacSHA256'],
  );
  const status = (f: () => void) => {
    try {
      f();
      return 0;
    } catch (err) {
      return (err as RestError).statusCode;
    }
  };
  assert.equal(
    status(() => verify({ signature: undefined, algorithm: undefined, body }, key, ['HmacSHA256'])),
    400,
  );
  assert.equal(
    status(() =>
      verify(
        { signature: headers['X-Connect-Authorization'], algorithm: 'HmacSHA256', body: Buffer.from('x') },
        key,
        ['HmacSHA256'],
      ),
    ),
    403,
  );
  assert.equal(
    status(() =>
      verify({ signature: headers['X-Connect-Authorization'], algorithm: 'HmacSHA1', body }, key, [
        'HmacSHA256',
      ]),
    ),
    400,
  );
  assert.equal(generateSessionKey('HmacSHA256', null, 1).key.length, 32);
  assert.equal(generateSessionKey('HmacSHA512', 128, 1).key.length, 16);
  const base = {
    'bootstrap.servers': 'localhost:9092',
    'group.id': 'g',
    'config.storage.topic': 'c',
    'offset.storage.topic': 'o',
    'status.storage.topic': 's',
  };
  assert.equal(loadWorkerConfig(base, 'distributed').parsed['inter.worker.key.ttl.ms'], 3_600_000);
  assert.throws(
    () => loadWorkerConfig({ ...base, 'inter.worker.signature.algorithm': 'HmacSHA512' }, 'distributed'),
    /must be present in verification algorithms list/,
  );
  assert.throws(
    () => loadWorkerConfig({ ...base, 'inter.worker.key.generation.algorithm': 'AES' }, 'distributed'),
    /KeyGenerator not available/,
  );
});

test('a worker that joins while new work is handed out still gets its share of the running work', () => {
  // m1 runs connector a with four tasks; m2 joins in the round that also brings a new connector h with one task.
  let members = [member('m1')];
  let r = run(members, { a: 4 }, null, 0);
  members = apply(members, r.assignments);
  assert.deepEqual(members.map(load), [5]);
  members.push(member('m2'));
  r = run(members, { a: 4, h: 1 }, r.memory, 1000);
  const revokedFromM1 = r.assignments.get('m1')!.revoked;
  assert.ok(
    revokedFromM1.connectors.length + revokedFromM1.tasks.length > 0,
    'm1 gives some of its units up',
  );
  members = apply(members, r.assignments);
  r = run(members, { a: 4, h: 1 }, r.memory, 1100);
  members = apply(members, r.assignments);
  assert.equal(
    members.map(load).reduce((x, y) => x + y),
    7,
  );
  assert.ok(Math.abs(load(members[0]!) - load(members[1]!)) <= 1, JSON.stringify(members.map(load)));
});
