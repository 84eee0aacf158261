import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';

interface KcatMessage {
  topic: string;
  partition: number;
  offset: number;
  tstype: string;
  ts: number;
  headers: string[] | null;
  key: string | null;
  payload: string | null;
}

describe('kcat (librdkafka) against a Brook broker', () => {
  let broker: BrokerProcess;
  before(async () => {
    broker = await startBroker({ overrides: { 'num.partitions': 2 } });
  });
  after(async () => {
    await broker?.stop();
  });

  for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) {
    it(`produces keyed records with headers compressed with ${codec} and consumes them back`, async () => {
      const topic = `kcat-${codec}`;
      const lines = Array.from({ length: 40 }, (_, i) => `k${i % 5}:${codec}-value-${i}`).join('\n');
      const produced = await run(
        'kcat',
        [
          '-b',
          broker.bootstrap,
          '-P',
          '-t',
          topic,
          '-K',
          ':',
          '-H',
          'origin=kcat',
          '-z',
          codec,
          '-X',
          'acks=all',
        ],
        { input: `${lines}\n`, timeoutMs: 30_000 },
      );
      assert.equal(produced.code, 0, `kcat -P failed: ${produced.stderr}\n${broker.log()}`);
      const consumed = await run(
        'kcat',
        ['-b', broker.bootstrap, '-C', '-t', topic, '-o', 'beginning', '-e', '-J'],
        {
          timeoutMs: 30_000,
        },
      );
      assert.equal(consumed.code, 0, `kcat -C failed: ${consumed.stderr}`);
      const messages = consumed.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as KcatMessage);
      assert.equal(messages.length, 40);
      const values = messages.map((m) => m.payload).sort();
      assert.deepEqual(values, Array.from({ length: 40 }, (_, i) => `${codec}-value-${i}`).sort());
      for (const m of messages) {
        assert.equal(m.key, `k${Number(m.payload!.split('-').pop()) % 5}`);
        assert.deepEqual(m.headers, ['origin', 'kcat']);
        assert.equal(m.tstype, 'create');
      }
      // Offsets in each partition start at 0 and have no gaps.
      for (const p of [0, 1]) {
        const offsets = messages.filter((m) => m.partition === p).map((m) => m.offset);
        assert.deepEqual(
          offsets,
          offsets.map((_, i) => i),
        );
      }
    });
  }

  it('lists metadata with the broker and auto-created topics', async () => {
    const r = await run('kcat', ['-b', broker.bootstrap, '-L', '-J'], { timeoutMs: 20_000 });
    assert.equal(r.code, 0, r.stderr);
    const md = JSON.parse(r.stdout) as {
      brokers: { id: number; name: string }[];
      topics: { topic: string; partitions: { partition: number; leader: number }[] }[];
    };
    assert.deepEqual(
      md.brokers.map((b) => b.id),
      [0],
    );
    assert.equal(md.brokers[0]!.name, broker.bootstrap);
    const topic = md.topics.find((t) => t.topic === 'kcat-none');
    assert.ok(topic, 'the topic created by producing is listed');
    assert.equal(topic.partitions.length, 2);
    assert.ok(topic.partitions.every((p) => p.leader === 0));
  });

  it('finds the first offset at or after a timestamp', async () => {
    const topic = 'kcat-times';
    const first = await run('kcat', ['-b', broker.bootstrap, '-P', '-t', topic, '-p', '0'], {
      input: 'a\nb\n',
    });
    assert.equal(first.code, 0, first.stderr);
    await new Promise((r) => setTimeout(r, 50));
    const middle = Date.now();
    await new Promise((r) => setTimeout(r, 50));
    const second = await run('kcat', ['-b', broker.bootstrap, '-P', '-t', topic, '-p', '0'], {
      input: 'c\n',
    });
    assert.equal(second.code, 0, second.stderr);
    const q = await run('kcat', ['-b', broker.bootstrap, '-Q', '-t', `${topic}:0:${middle}`], {
      timeoutMs: 20_000,
    });
    assert.equal(q.code, 0, q.stderr);
    assert.match(q.stdout, /offset 2\b/);
  });
});
