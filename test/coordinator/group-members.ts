// Group members as child processes, for the consumer group compatibility tests: kcat -G (librdkafka's balanced
// consumer) and test/compat/scripts/groups_consume.py (kafka-python or confluent-kafka-python). Each member's
// consumed records and assignments are collected as they arrive; tests wait on conditions over them. stop()
// sends SIGTERM (a clean close, which leaves the group), kill() SIGKILL (a crash, found by session timeout).
// Every process is ended by its own PID.

import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const SCRIPT = resolve(REPO_ROOT, 'test/compat/scripts/groups_consume.py');

export interface Consumed {
  readonly partition: number;
  readonly offset: number;
  readonly value: string;
  /** How many assignments the member had received when it consumed this record. */
  readonly assignmentCount: number;
}

export class GroupMember {
  readonly records: Consumed[] = [];
  readonly assignments: number[][] = [];
  /** Error events the client reported (for example no committed offset with auto.offset.reset=none). */
  readonly errors: string[] = [];
  private output = '';
  private stderr = '';
  private readonly exited: Promise<number | null>;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    parse: (line: string, member: GroupMember) => void,
    stream: 'stdout' | 'stderr',
  ) {
    let pending = '';
    const onData = (d: Buffer) => {
      pending += d.toString();
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        parse(line, this);
      }
    };
    child.stdout!.on('data', (d: Buffer) => {
      this.output += d.toString();
      if (stream === 'stdout') onData(d);
    });
    child.stderr!.on('data', (d: Buffer) => {
      this.stderr += d.toString();
      if (stream === 'stderr') onData(d);
    });
    this.exited = new Promise((r) => child.once('exit', (code) => r(code)));
  }

  /** kafka-python ('kafka-python') or confluent-kafka-python ('confluent') through groups_consume.py. */
  static python(
    client: 'kafka-python' | 'confluent',
    bootstrap: string,
    group: string,
    topic: string,
    reset: 'earliest' | 'latest' | 'none',
    sessionTimeoutMs = 6000,
    options: { groupInstanceId?: string; strategy?: string } = {},
  ): GroupMember {
    const child = spawn(
      '/usr/bin/python3',
      [
        SCRIPT,
        client,
        bootstrap,
        group,
        topic,
        reset,
        String(sessionTimeoutMs),
        options.groupInstanceId ?? '-',
        options.strategy ?? 'range',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    return new GroupMember(
      client,
      child,
      (line, member) => {
        if (!line.startsWith('{')) return;
        const o = JSON.parse(line) as {
          event?: string;
          partitions?: number[];
          p?: number;
          o?: number;
          v?: string;
        };
        if (o.event === 'assigned') member.assignments.push(o.partitions!);
        else if (o.event === 'error') member.errors.push((o as { error?: string }).error ?? '');
        else if (o.event === undefined)
          member.records.push({
            partition: o.p!,
            offset: o.o!,
            value: o.v!,
            assignmentCount: member.assignments.length,
          });
      },
      'stdout',
    );
  }

  /** kcat -G: records on stdout as "partition offset value", rebalances on stderr. */
  static kcat(
    bootstrap: string,
    group: string,
    topic: string,
    reset: 'earliest' | 'latest',
    sessionTimeoutMs = 6000,
  ): GroupMember {
    const child = spawn(
      'kcat',
      [
        '-u',
        '-b',
        bootstrap,
        '-G',
        group,
        '-f',
        '%p %o %s\\n',
        '-X',
        `auto.offset.reset=${reset}`,
        '-X',
        `session.timeout.ms=${sessionTimeoutMs}`,
        '-X',
        'heartbeat.interval.ms=500',
        '-X',
        'auto.commit.interval.ms=200',
        '-X',
        'partition.assignment.strategy=range',
        topic,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const member = new GroupMember('kcat', child, () => {}, 'stderr');
    let pending = '';
    child.stdout!.on('data', (d: Buffer) => {
      pending += d.toString();
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        const m = /^(\d+) (\d+) (.*)$/.exec(line);
        if (m)
          member.records.push({
            partition: Number(m[1]),
            offset: Number(m[2]),
            value: m[3]!,
            assignmentCount: member.assignments.length,
          });
      }
    });
    let errPending = '';
    child.stderr!.on('data', (d: Buffer) => {
      errPending += d.toString();
      for (let nl = errPending.indexOf('\n'); nl >= 0; nl = errPending.indexOf('\n')) {
        const line = errPending.slice(0, nl);
        errPending = errPending.slice(nl + 1);
        const m = /rebalanced \(memberid [^)]*\): assigned: (.*)$/.exec(line);
        if (m) member.assignments.push([...m[1]!.matchAll(/\[(\d+)\]/g)].map((x) => Number(x[1])).sort());
      }
    });
    return member;
  }

  get latestAssignment(): number[] {
    return this.assignments.at(-1) ?? [];
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** What the process printed, for failure messages. */
  log(): string {
    return `--- ${this.name} stdout\n${this.output.slice(-3000)}\n--- ${this.name} stderr\n${this.stderr.slice(-3000)}`;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async stop(): Promise<number | null> {
    if (this.running) this.child.kill('SIGTERM');
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    const code = await this.exited;
    clearTimeout(killer);
    return code;
  }

  async kill(): Promise<void> {
    if (this.running) this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** True when the members' latest assignments are disjoint and together cover partitions 0..count-1. */
export function coversExactly(members: readonly GroupMember[], count: number): boolean {
  const all = members.flatMap((m) => m.latestAssignment);
  return all.length === count && new Set(all).size === count;
}
