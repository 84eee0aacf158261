// The mirror's lag per partition, read from the clusters alone (so it works while MirrorMaker runs elsewhere):
// the position stored in `mm2-offsets.<source>.internal` on the target against the source partition's end
// offset. `brook mirror-maker mm2.properties --status` prints it.

import { Admin } from '../../client/index.js';
import { silentLogger } from '../../common/logger.js';
import { MirrorConfig } from './mirror-config.js';
import { flowOffsetStore } from './mirror-maker.js';
import { parseMirrorMakerConfig } from './mm2-config.js';

export interface PartitionLag {
  flow: string;
  topic: string;
  partition: number;
  remoteTopic: string;
  /** The source partition's end offset. */
  sourceEndOffset: number;
  /** The next source offset the mirror will copy (stored offset + 1), 0 when nothing is stored yet. */
  mirroredOffset: number;
  lag: number;
}

export async function mirrorLag(props: Record<string, string>): Promise<PartitionLag[]> {
  const out: PartitionLag[] = [];
  for (const flow of parseMirrorMakerConfig(props).flows) {
    if (!flow.replicates) continue; // a pair run only for its heartbeats mirrors no partition
    const c = new MirrorConfig(flow.connectorProps);
    const name = `${flow.source}->${flow.target}`;
    const store = flowOffsetStore(flow, `${name}|status`, silentLogger);
    const stored = new Map<string, number>();
    try {
      await store.start();
      for (const e of store.list('MirrorSourceConnector')) {
        const p = e.partition as { cluster: string; topic: string; partition: number };
        const o = (e.offset as { offset?: number } | null)?.offset;
        if (p.cluster === flow.source && typeof o === 'number')
          stored.set(`${p.topic}\u0000${p.partition}`, o + 1);
      }
    } finally {
      await store.stop();
    }
    const source = new Admin(c.clientOptions('source', `${name}|status`, 'admin'));
    try {
      const tps = [...stored.keys()].map((k) => {
        const [topic, partition] = k.split('\u0000') as [string, string];
        return { topic, partition: Number(partition) };
      });
      const ends = await source.listOffsets(tps.map((tp) => ({ ...tp, spec: 'latest' as const })));
      for (const e of ends) {
        const mirrored = stored.get(`${e.topic}\u0000${e.partition}`) ?? 0;
        out.push({
          flow: name,
          topic: e.topic,
          partition: e.partition,
          remoteTopic: c.policy.formatRemoteTopic(flow.source, e.topic),
          sourceEndOffset: e.offset,
          mirroredOffset: mirrored,
          lag: Math.max(0, e.offset - mirrored),
        });
      }
    } finally {
      await source.close();
    }
  }
  return out.sort(
    (a, b) => a.flow.localeCompare(b.flow) || a.topic.localeCompare(b.topic) || a.partition - b.partition,
  );
}
