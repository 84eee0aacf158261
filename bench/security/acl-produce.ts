// `npm run bench -- acl-produce`: what the authorization check costs produce throughput. Two brokers run side by
// side in one run, one without an authorizer and one with kafka.security.authorizer.AclAuthorizer holding 10,000
// ACLs (literal and prefixed topic ACLs, some on prefixes of the produced topic, the wildcard resource, group
// ACLs); G1 produces to each in turn, alternating, so both see the same machine. The figure is records/s with
// ACLs over records/s without, median of the repetitions. Before measuring, a produce to a topic without an ACL
// must be refused by the ACL broker, so a run whose authorizer is not on cannot pass for a cheap one.
//
// Also times the check alone in this process (AclCache.authorize with the same 10,000 ACLs): nanoseconds a call.
//
// Options: --quick (2 s windows, 3 repetitions), --seconds N (window, default 5), --repetitions N (default 3),
// --acls N (default 10000).

import { assert } from '../../src/common/assert.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { ProduceResponse } from '../../src/protocol/messages/00-produce.js';
import type { CreateAclsResponse } from '../../src/protocol/messages/30-create-acls.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { AclCache } from '../../src/security/authorizer/acl-cache.js';
import {
  type AclBinding,
  AclOperation,
  PatternType,
  PermissionType,
  ResourceType,
} from '../../src/security/authorizer/acl-types.js';
import { type BrokerProcess, startBroker } from '../broker/broker-process.js';
import { benchVersions, createTopic, waitForTopic } from '../broker/broker-setup.js';
import { runG1 } from '../broker/g1-producer.js';
import { recordsPerBatch } from '../broker/produce-requests.js';
import { WireConnection } from '../broker/wire-connection.js';
import {
  formatSummaryRange,
  formatTable,
  ResultWriter,
  ratioOfSummaries,
  readProcessCpu,
  summarize,
  withTempDir,
} from '../harness/index.js';

const TOPIC = 'bench-acl';
const PARTITIONS = 4;
const CREATE_BATCH = 500;

interface Options {
  seconds: number;
  repetitions: number;
  acls: number;
  /** An A/A run: the second broker has no authorizer either, to show what the method itself reads as a cost. */
  control: boolean;
}

function parse(args: string[]): Options {
  const options: Options = { seconds: 5, repetitions: 3, acls: 10_000, control: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--quick') options.seconds = 2;
    else if (arg === '--seconds') options.seconds = Number(args[++i]);
    else if (arg === '--repetitions') options.repetitions = Number(args[++i]);
    else if (arg === '--acls') options.acls = Number(args[++i]);
    else if (arg === '--control') options.control = true;
    else if (arg === '--help') {
      console.log('usage: npm run bench -- acl-produce [--quick] [--seconds N] [--repetitions N] [--acls N]');
      process.exit(0);
    } else throw new Error(`unknown option ${arg}`);
  }
  assert(options.repetitions >= 3 && options.seconds > 0 && options.acls >= 100, 'bad options');
  return options;
}

/**
 * `count` ACL bindings shaped like a busy cluster's: per-user literal topic ACLs, prefixed topic ACLs (several on
 * prefixes of the produced topic, for other users, so the check gathers several lists), the wildcard resource,
 * group ACLs, and the one that lets User:ANONYMOUS write the produced topic.
 */
export function benchAcls(count: number): AclBinding[] {
  const out: AclBinding[] = [];
  const add = (
    resourceType: number,
    name: string,
    patternType: number,
    principal: string,
    operation: number,
    permissionType: number = PermissionType.ALLOW,
  ) =>
    out.push({
      pattern: { resourceType, name, patternType },
      entry: { principal, host: '*', operation, permissionType },
    });
  add(ResourceType.TOPIC, TOPIC, PatternType.LITERAL, 'User:ANONYMOUS', AclOperation.WRITE);
  add(ResourceType.TOPIC, '*', PatternType.LITERAL, 'User:auditor', AclOperation.DESCRIBE);
  add(ResourceType.TOPIC, '*', PatternType.LITERAL, 'User:intruder', AclOperation.ALL, PermissionType.DENY);
  for (const prefix of ['b', 'be', 'ben', 'bench', 'bench-'])
    add(ResourceType.TOPIC, prefix, PatternType.PREFIXED, 'User:team-b', AclOperation.READ);
  const literal = Math.floor(count * 0.6);
  const prefixed = Math.floor(count * 0.2);
  for (let i = 0; out.length < count && i < literal; i++) {
    add(
      ResourceType.TOPIC,
      `orders-${i}`,
      PatternType.LITERAL,
      `User:app-${i % 200}`,
      i % 2 === 0 ? AclOperation.READ : AclOperation.WRITE,
    );
  }
  for (let i = 0; out.length < count && i < prefixed; i++) {
    add(
      ResourceType.TOPIC,
      `team-${i}${'-x'.repeat(i % 4)}.`,
      PatternType.PREFIXED,
      `User:team-${i % 50}`,
      AclOperation.ALL,
    );
  }
  for (let i = 0; out.length < count; i++) {
    add(
      ResourceType.GROUP,
      `group-${i}`,
      i % 3 === 0 ? PatternType.PREFIXED : PatternType.LITERAL,
      `User:app-${i % 200}`,
      AclOperation.READ,
    );
  }
  return out;
}

async function setUp(broker: BrokerProcess, acls: readonly AclBinding[]): Promise<void> {
  const connection = await WireConnection.connect('127.0.0.1', broker.port);
  try {
    await createTopic(connection, TOPIC, PARTITIONS);
    await waitForTopic(connection, TOPIC, PARTITIONS);
    if (acls.length === 0) return;
    await createTopic(connection, 'bench-denied', 1);
    await waitForTopic(connection, 'bench-denied', 1);
    for (let i = 0; i < acls.length; i += CREATE_BATCH) {
      const creations = acls.slice(i, i + CREATE_BATCH).map(({ pattern, entry }) => ({
        resourceType: pattern.resourceType,
        resourceName: pattern.name,
        resourcePatternType: pattern.patternType,
        ...entry,
      }));
      const response = await connection.call<CreateAclsResponse>(ApiKey.CREATE_ACLS, 3, { creations });
      const failed = response.results.find((r) => r.errorCode !== ErrorCode.NONE);
      assert(failed === undefined, `CreateAcls failed: ${failed?.errorMessage}`);
    }
    // The authorizer must be on and loaded: a topic without an ACL for User:ANONYMOUS is refused.
    const refused = await connection.call<ProduceResponse>(ApiKey.PRODUCE, benchVersions.produce, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [
        { name: 'bench-denied', partitionData: [{ index: 0, records: buildBatch([{ value: 'x' }]) }] },
      ],
    });
    const code = refused.responses[0]?.partitionResponses[0]?.errorCode;
    assert(code === ErrorCode.TOPIC_AUTHORIZATION_FAILED, `the ACL broker did not refuse: ${code}`);
  } finally {
    connection.close();
  }
}

interface Window {
  recordsPerSecond: number;
  /** Records per CPU-second of the broker: less moved by other work on a shared machine than records/s. */
  recordsPerCpuSecond: number;
}

async function measure(broker: BrokerProcess, seconds: number): Promise<Window> {
  let cpuStart = 0;
  let cpuEnd = 0;
  const cpu = (): number => {
    const c = readProcessCpu(broker.pid);
    return c === undefined ? 0 : c.userSeconds + c.systemSeconds;
  };
  const result = await runG1({
    onWindow: (edge) => {
      if (edge === 'start') cpuStart = cpu();
      else cpuEnd = cpu();
    },
    host: '127.0.0.1',
    port: broker.port,
    topic: TOPIC,
    partitions: PARTITIONS,
    recordBytes: 100,
    // Small batches, one partition a request: many requests, so a per-request cost shows.
    batchBytes: 16 * 1024,
    partitionsPerRequest: 1,
    acks: 1,
    inFlight: 5,
    connections: 1,
    warmupMs: 500,
    durationMs: seconds * 1000,
  });
  const errors = Object.keys(result.errors);
  assert(errors.length === 0, `produce errors: ${errors.join(', ')}`);
  const cpuSeconds = cpuEnd - cpuStart;
  assert(cpuSeconds > 0, 'no CPU time was read for the broker');
  return {
    recordsPerSecond: result.records / result.seconds,
    recordsPerCpuSecond: result.records / cpuSeconds,
  };
}

async function idleCpu(brokers: readonly BrokerProcess[], ms: number): Promise<number[]> {
  const read = (b: BrokerProcess): number => {
    const c = readProcessCpu(b.pid);
    return c === undefined ? 0 : c.userSeconds + c.systemSeconds;
  };
  const before = brokers.map(read);
  await new Promise((r) => setTimeout(r, ms));
  return brokers.map((b, i) => read(b) - before[i]!);
}

/** Nanoseconds one AclCache.authorize takes with these ACLs (the produced topic, its allowed principal). */
function checkCostNs(acls: readonly AclBinding[]): number {
  const cache = new AclCache();
  const byPattern = new Map<string, { pattern: AclBinding['pattern']; entries: AclBinding['entry'][] }>();
  for (const { pattern, entry } of acls) {
    const key = `${pattern.resourceType}|${pattern.patternType}|${pattern.name}`;
    const group = byPattern.get(key) ?? { pattern, entries: [] };
    group.entries.push(entry);
    byPattern.set(key, group);
  }
  for (const { pattern, entries } of byPattern.values()) cache.set(pattern, entries);
  const calls = 2_000_000;
  let allowed = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    if (cache.authorize('User:ANONYMOUS', '127.0.0.1', AclOperation.WRITE, ResourceType.TOPIC, TOPIC, false))
      allowed++;
  }
  const ns = Number(process.hrtime.bigint() - started) / calls;
  assert(allowed === calls, 'the check must allow the produced topic');
  return ns;
}

export async function run(args: string[]): Promise<void> {
  const options = parse(args);
  const writer = new ResultWriter({ bench: 'acl-produce', args });
  const acls = benchAcls(options.acls);
  const nsPerCheck = checkCostNs(acls);
  writer.write('check-ns', { acls: acls.length, nsPerCheck });
  console.log(`AclCache.authorize with ${acls.length} ACLs: ${nsPerCheck.toFixed(0)} ns a check`);
  await withTempDir('.', '.brook-bench-acl-', async (dir) => {
    const off = await startBroker({ dataDir: `${dir}/off` });
    let on: BrokerProcess | null = null;
    try {
      on = await startBroker({
        dataDir: `${dir}/on`,
        overrides: options.control
          ? {}
          : {
              'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer',
              // No ACL on the cluster yet: the setup connection may create topics and ACLs. The produced topic
              // has ACLs, so its check is a full one.
              'allow.everyone.if.no.acl.found': true,
            },
      });
      await setUp(off, []);
      const setupStarted = performance.now();
      await setUp(on, options.control ? [] : acls);
      const setupSeconds = (performance.now() - setupStarted) / 1000;
      console.log(`created ${acls.length} ACLs in ${setupSeconds.toFixed(1)} s`);
      // Idle CPU of both brokers after the set-up: work still going on in the background would bias the windows.
      const idle = await idleCpu([off, on], 2000);
      writer.write('idle cpu', { off: idle[0], on: idle[1] });
      console.log(
        `idle CPU over 2 s: no authorizer ${idle[0]!.toFixed(3)} s, ACL broker ${idle[1]!.toFixed(3)} s`,
      );
      const offWindows: Window[] = [];
      const onWindows: Window[] = [];
      for (let r = 0; r < options.repetitions; r++) {
        // Alternating, the order flipped each time, so drift of the machine falls on both.
        const pair = r % 2 === 0 ? ([off, on] as const) : ([on, off] as const);
        for (const broker of pair) {
          (broker === off ? offWindows : onWindows).push(await measure(broker, options.seconds));
        }
      }
      const rows: string[][] = [];
      const figures: [string, (w: Window) => number][] = [
        ['records/s', (w) => w.recordsPerSecond],
        ['records/CPU-s', (w) => w.recordsPerCpuSecond],
      ];
      for (const [unit, pick] of figures) {
        const offSummary = summarize(offWindows.map(pick));
        const onSummary = summarize(onWindows.map(pick));
        const cost = ratioOfSummaries(onSummary, offSummary);
        writer.figure(`authorizer-off ${unit}`, unit, offSummary);
        writer.figure(`authorizer-on ${unit}`, unit, onSummary, { acls: acls.length, setupSeconds });
        writer.write(`on-over-off ${unit}`, { ...cost });
        rows.push([
          unit,
          formatSummaryRange(offSummary),
          formatSummaryRange(onSummary),
          `${(cost.median * 100).toFixed(1)} %`,
        ]);
      }
      console.log(
        formatTable(['figure', 'no authorizer', `AclAuthorizer, ${acls.length} ACLs`, 'on / off'], rows),
      );
      // Each repetition's two windows ran back to back: their ratio is less moved by the machine's drift than the
      // ratio of the medians.
      const paired = summarize(
        onWindows.map((w, i) => w.recordsPerCpuSecond / offWindows[i]!.recordsPerCpuSecond),
      );
      writer.figure('paired on/off records/CPU-s', 'ratio', paired);
      // What the checks cost, from figures of this same run: a produce request makes one check per topic (one
      // here), so the share of the broker's CPU they take is a check's time over a request's CPU time without ACLs.
      const offPerCpuSecond = summarize(offWindows.map((w) => w.recordsPerCpuSecond)).median;
      const requestCpuNs = (recordsPerBatch(100, 16 * 1024) / offPerCpuSecond) * 1e9;
      const checkShare = nsPerCheck / requestCpuNs;
      writer.write('check share of request CPU', { nsPerCheck, requestCpuNs, checkShare });
      console.log(
        `paired ratios (records/CPU-s, on/off): median ${(paired.median * 100).toFixed(1)} % ` +
          `(${(paired.min * 100).toFixed(1)}-${(paired.max * 100).toFixed(1)} %)`,
      );
      console.log(
        `one check ${nsPerCheck.toFixed(0)} ns against ${(requestCpuNs / 1000).toFixed(0)} us of broker CPU a ` +
          `produce request: ${(checkShare * 100).toFixed(2)} % (run ${writer.runId})`,
      );
    } finally {
      await on?.stop();
      await off.stop();
    }
  });
}
