// The chaos cluster's private network: one Linux network namespace per node (ZooKeeper, each broker), each joined
// by a veth pair to one bridge in the root namespace, with addresses in a /24 of 198.18.0.0/15 (RFC 2544's
// benchmarking range, routed nowhere) that exists only on that bridge and in those namespaces. The test process
// reaches every node over the bridge; nothing is sent to any other address.
//
// Faults live inside the namespaces, never in the root namespace's tables:
// - partitions: iptables rules in each node's own CHAOS_PART chain (jumped to from INPUT) that drop packets from
//   the addresses it holds a grudge against; a symmetric cut is a grudge on both sides, an asymmetric one on one;
// - a degraded link: tc netem delay and loss on the node's eth0 when the kernel has netem; otherwise a token
//   bucket (tbf) that throttles the link plus random drops by iptables' statistic match in CHAOS_LOSS.
//
// Names carry the run's tag (bridge `bc<tag>br`, veths `bc<tag>v<i>`, namespaces `brook-chaos-<tag>-<node>`) so
// that runs never collide and leftovers are easy to find. destroy() removes the namespaces (which takes their
// veths, rules and qdiscs with them) and the bridge; destroySync() does the same from an exit hook.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { run, tryRun } from './shell.js';

export interface NetNode {
  readonly name: string;
  readonly netns: string;
  readonly address: string;
}

/** Which nodes' packets each node drops: node name -> names it does not hear from. */
export type Grudge = Map<string, Set<string>>;

export type LinkFault = { kind: 'slow'; delayMs: number } | { kind: 'lossy'; lossPercent: number };

const PART_CHAIN = 'CHAOS_PART';
const LOSS_CHAIN = 'CHAOS_LOSS';

export class ChaosNetwork {
  readonly bridge: string;
  readonly bridgeAddress: string;
  readonly nodes = new Map<string, NetNode>();
  private readonly createdNamespaces: string[] = [];
  private readonly createdVeths: string[] = [];
  private bridgeCreated = false;
  private netemAvailable = false;
  private readonly degraded = new Set<string>();
  private destroyed = false;

  private constructor(
    readonly tag: string,
    private readonly subnet: string,
  ) {
    this.bridge = `bc${tag}br`;
    this.bridgeAddress = `${subnet}.1`;
  }

  /** Creates the bridge and one namespace per node name; on failure removes what it made and throws. */
  static async create(tag: string, nodeNames: readonly string[]): Promise<ChaosNetwork> {
    assert(/^[0-9a-f]{5}$/.test(tag), 'tag: 5 hex digits (interface names are at most 15 characters)');
    assert(nodeNames.length < 200);
    const net = new ChaosNetwork(tag, await freeSubnet(tag));
    try {
      await net.setUp(nodeNames);
    } catch (e) {
      await net.destroy();
      throw e;
    }
    return net;
  }

  private async setUp(nodeNames: readonly string[]): Promise<void> {
    await run('ip', ['link', 'add', this.bridge, 'type', 'bridge']);
    this.bridgeCreated = true;
    await run('ip', ['addr', 'add', `${this.bridgeAddress}/24`, 'dev', this.bridge]);
    await run('ip', ['link', 'set', this.bridge, 'up']);
    for (const [i, name] of nodeNames.entries()) {
      const netns = `brook-chaos-${this.tag}-${name}`;
      const hostSide = `bc${this.tag}v${i}`;
      const nodeSide = `bc${this.tag}n${i}`;
      const address = `${this.subnet}.${10 + i}`;
      await run('ip', ['netns', 'add', netns]);
      this.createdNamespaces.push(netns);
      await run('ip', ['link', 'add', hostSide, 'type', 'veth', 'peer', 'name', nodeSide]);
      this.createdVeths.push(hostSide);
      // Moving the peer into the namespace first: if a later step fails, deleting the namespace removes the pair.
      await run('ip', ['link', 'set', nodeSide, 'netns', netns]);
      await run('ip', ['link', 'set', hostSide, 'master', this.bridge]);
      await run('ip', ['link', 'set', hostSide, 'up']);
      await run('ip', ['-n', netns, 'link', 'set', nodeSide, 'name', 'eth0']);
      await run('ip', ['-n', netns, 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
      await run('ip', ['-n', netns, 'link', 'set', 'eth0', 'up']);
      await run('ip', ['-n', netns, 'link', 'set', 'lo', 'up']);
      for (const chain of [PART_CHAIN, LOSS_CHAIN]) {
        await this.iptables(netns, ['-N', chain]);
        await this.iptables(netns, ['-A', 'INPUT', '-j', chain]);
      }
      this.nodes.set(name, { name, netns, address });
    }
    const first = this.createdNamespaces[0];
    if (first !== undefined) {
      const probe = await tryRun('ip', [
        'netns',
        'exec',
        first,
        'tc',
        'qdisc',
        'add',
        'dev',
        'lo',
        'root',
        'netem',
      ]);
      this.netemAvailable = probe.code === 0;
      if (this.netemAvailable)
        await tryRun('ip', ['netns', 'exec', first, 'tc', 'qdisc', 'del', 'dev', 'lo', 'root']);
    }
  }

  /** Whether link faults use netem (else tbf throttling and iptables random drops). */
  get hasNetem(): boolean {
    return this.netemAvailable;
  }

  node(name: string): NetNode {
    const n = this.nodes.get(name);
    assert(n !== undefined, `no node ${name}`);
    return n;
  }

  /** Replaces every partition rule with the grudge (nodes not named hear from everyone). */
  async partition(grudge: Grudge): Promise<void> {
    await this.heal();
    for (const [name, deaf] of grudge) {
      const node = this.node(name);
      for (const other of deaf) {
        if (other === name) continue;
        await this.iptables(node.netns, ['-A', PART_CHAIN, '-s', this.node(other).address, '-j', 'DROP']);
      }
    }
  }

  /** Removes every partition rule. */
  async heal(): Promise<void> {
    for (const node of this.nodes.values()) await this.iptables(node.netns, ['-F', PART_CHAIN]);
  }

  async degrade(name: string, fault: LinkFault): Promise<void> {
    const node = this.node(name);
    await this.restore(name);
    const tc = (args: string[]) =>
      run('ip', ['netns', 'exec', node.netns, 'tc', 'qdisc', 'add', 'dev', 'eth0', 'root', ...args]);
    if (fault.kind === 'slow') {
      if (this.netemAvailable)
        await tc(['netem', 'delay', `${fault.delayMs}ms`, `${Math.round(fault.delayMs / 4)}ms`]);
      // Without netem: a 2 Mbit/s bucket whose queue may hold delayMs of traffic, so busy links wait that long.
      else await tc(['tbf', 'rate', '2mbit', 'burst', '16kb', 'latency', `${fault.delayMs}ms`]);
    } else if (this.netemAvailable) {
      await tc(['netem', 'loss', `${fault.lossPercent}%`]);
    } else {
      const probability = (fault.lossPercent / 100).toFixed(3);
      await this.iptables(node.netns, [
        '-A',
        LOSS_CHAIN,
        '-m',
        'statistic',
        '--mode',
        'random',
        '--probability',
        probability,
        '-j',
        'DROP',
      ]);
    }
    this.degraded.add(name);
  }

  async restore(name: string): Promise<void> {
    if (!this.degraded.has(name)) return;
    const node = this.node(name);
    await tryRun('ip', ['netns', 'exec', node.netns, 'tc', 'qdisc', 'del', 'dev', 'eth0', 'root']);
    await this.iptables(node.netns, ['-F', LOSS_CHAIN]);
    this.degraded.delete(name);
  }

  async restoreAll(): Promise<void> {
    for (const name of [...this.degraded]) await this.restore(name);
  }

  /** The rules in force, for the report. */
  async describe(name: string): Promise<string> {
    const node = this.node(name);
    const rules = await tryRun('ip', ['netns', 'exec', node.netns, 'iptables', '-S']);
    return rules.stdout;
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    // The veths go first and explicitly: a namespace outlives `ip netns del` while sockets still refer to it
    // (closed connections retransmitting into a partition), and its veth pair would linger with it.
    for (const veth of this.createdVeths) await tryRun('ip', ['link', 'del', veth]);
    for (const netns of this.createdNamespaces) await tryRun('ip', ['netns', 'del', netns]);
    if (this.bridgeCreated) await tryRun('ip', ['link', 'del', this.bridge]);
  }

  /** destroy() for an exit hook, where only synchronous work runs. */
  destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const veth of this.createdVeths) spawnSync('ip', ['link', 'del', veth], { timeout: 10_000 });
    for (const netns of this.createdNamespaces) spawnSync('ip', ['netns', 'del', netns], { timeout: 10_000 });
    if (this.bridgeCreated) spawnSync('ip', ['link', 'del', this.bridge], { timeout: 10_000 });
  }

  private async iptables(netns: string, args: string[]): Promise<void> {
    // -w: wait for the xtables lock rather than fail when another rule is being written at the same time.
    await run('ip', ['netns', 'exec', netns, 'iptables', '-w', '5', ...args]);
  }
}

/** A /24 of 198.18.0.0/15 that no interface or route of this machine uses yet, chosen from the run's tag. */
async function freeSubnet(tag: string): Promise<string> {
  const used = `${await run('ip', ['-4', 'addr'])}\n${await run('ip', ['-4', 'route'])}`;
  const start = Number.parseInt(tag, 16);
  for (let i = 0; i < 512; i++) {
    const n = (start + i) % 512;
    const subnet = `198.${18 + (n >> 8)}.${n & 255}`;
    if (!used.includes(`${subnet}.`)) return subnet;
  }
  throw new Error('no free /24 in 198.18.0.0/15');
}
