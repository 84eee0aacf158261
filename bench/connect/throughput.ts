// `npm run bench -- connect [--records N] [--repeats R] [--quick]`: Brook Connect's throughput against what it
// is built on, in the same run, on one broker process and one PostgreSQL server started for the run:
//   FileStreamSource  N lines of a file into a topic, until the topic's end offset is N
//                     vs Brook's plain producer sending the same lines (the ceiling of the source path)
//   PostgreSQL sink   N records with JSON schemas from a topic into a table (upsert, record_value key)
//                     vs a plain loop of multi-row INSERTs of the same rows in batches of 500
// Each side runs R times, alternating; the table gives records per second (median and range) and the ratio.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Admin, Producer } from '../../src/client/index.js';
import { startStandalone } from '../../src/connect/runtime/standalone.js';
import { startBroker } from '../../test/helpers/broker-process.js';
import { startPostgres } from '../../test/helpers/postgres.js';
import { numberOption } from '../harness/options.js';

const INSERT_BATCH_ROWS = 500;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function run(args: string[]): Promise<void> {
  if (args.includes('--help')) {
    process.stdout.write('usage: npm run bench -- connect [--records N] [--repeats R] [--quick]\n');
    return;
  }
  const quick = args.includes('--quick');
  const records = numberOption(args, '--records', quick ? 20_000 : 100_000);
  const repeats = numberOption(args, '--repeats', quick ? 1 : 3);
  const dir = mkdtempSync(join(tmpdir(), 'brook-bench-connect-'));
  const [broker, postgres] = await Promise.all([
    startBroker({ overrides: { 'num.partitions': 1 } }),
    startPostgres(),
  ]);
  const db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  const worker = await startStandalone(
    {
      'bootstrap.servers': broker.bootstrap,
      listeners: 'http://127.0.0.1:0',
      'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
      'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
      'offset.storage.file.filename': join(dir, 'connect.offsets'),
      'offset.flush.interval.ms': '1000',
    },
    () => {},
  );
  const endOffset = async (topic: string) =>
    (await admin.listOffsets([{ topic, partition: 0, spec: 'latest' }]).catch(() => [{ offset: 0 }]))[0]
      ?.offset ?? 0;
  const results: Record<string, number[]> = { source: [], producer: [], sink: [], insert: [] };
  const lines = Array.from({ length: records }, (_, i) => `line ${i} ${'x'.repeat(80)}`);
  try {
    for (let rep = 0; rep < repeats; rep++) {
      // FileStreamSource vs the plain producer.
      const file = join(dir, `lines-${rep}.txt`);
      writeFileSync(file, `${lines.join('\n')}\n`);
      let t0 = performance.now();
      await worker.herder.putConnectorConfig(
        `file-source-${rep}`,
        {
          name: `file-source-${rep}`,
          'connector.class': 'FileStreamSource',
          file,
          topic: `bench-source-${rep}`,
        },
        false,
      );
      await until(async () => (await endOffset(`bench-source-${rep}`)) >= records, 300_000);
      results.source!.push((records * 1000) / (performance.now() - t0));
      await worker.herder.deleteConnector(`file-source-${rep}`);

      const producer = new Producer({ bootstrapServers: broker.bootstrap });
      t0 = performance.now();
      await Promise.all(
        lines.map((line) => producer.send({ topic: `bench-producer-${rep}`, value: Buffer.from(line) })),
      );
      results.producer!.push((records * 1000) / (performance.now() - t0));
      await producer.close();

      // The PostgreSQL sink vs a batched INSERT loop of the same rows.
      const topic = `bench-sink-${rep}`;
      const schema = {
        type: 'struct',
        fields: [
          { type: 'int32', optional: false, field: 'id' },
          { type: 'string', optional: false, field: 'name' },
          { type: 'int64', optional: false, field: 'amount' },
        ],
        optional: false,
        name: 'row',
      };
      const feeder = new Producer({ bootstrapServers: broker.bootstrap, lingerMs: 5 });
      const sent: Promise<unknown>[] = [];
      for (let i = 0; i < records; i++) {
        sent.push(
          feeder.send({
            topic,
            value: Buffer.from(
              JSON.stringify({ schema, payload: { id: i, name: `row ${i}`, amount: i * 7 } }),
            ),
          }),
        );
      }
      await Promise.all(sent);
      await feeder.close();
      t0 = performance.now();
      await worker.herder.putConnectorConfig(
        `pg-sink-${rep}`,
        {
          name: `pg-sink-${rep}`,
          'connector.class': 'PostgresSink',
          'connection.url': postgres.jdbcUrl,
          'connection.user': postgres.user,
          topics: topic,
          'table.name.format': `sink_${rep}`,
          'insert.mode': 'upsert',
          'pk.mode': 'record_value',
          'pk.fields': 'id',
          'auto.create': 'true',
          'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
        },
        false,
      );
      await until(async () => {
        const t = await db.query('SELECT to_regclass($1) AS t', [`sink_${rep}`]);
        if (t.rows[0].t === null) return false;
        return (await db.query(`SELECT count(*)::int AS n FROM sink_${rep}`)).rows[0].n >= records;
      }, 600_000);
      results.sink!.push((records * 1000) / (performance.now() - t0));
      await worker.herder.deleteConnector(`pg-sink-${rep}`);

      await db.query(
        `CREATE TABLE plain_${rep} (id INT PRIMARY KEY, name TEXT NOT NULL, amount BIGINT NOT NULL)`,
      );
      t0 = performance.now();
      for (let start = 0; start < records; start += INSERT_BATCH_ROWS) {
        const params: unknown[] = [];
        const tuples: string[] = [];
        for (let i = start; i < Math.min(records, start + INSERT_BATCH_ROWS); i++) {
          params.push(i, `row ${i}`, i * 7);
          tuples.push(`($${params.length - 2},$${params.length - 1},$${params.length})`);
        }
        await db.query(`INSERT INTO plain_${rep} (id, name, amount) VALUES ${tuples.join(',')}`, params);
      }
      results.insert!.push((records * 1000) / (performance.now() - t0));
    }
  } finally {
    await worker.stop();
    await admin.close();
    await db.end();
    await postgres.stop();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const fmt = (xs: number[]) =>
    `${Math.round(median(xs))} (${Math.round(Math.min(...xs))}-${Math.round(Math.max(...xs))})`;
  process.stdout.write(`records per side: ${records}, repeats: ${repeats}\n`);
  process.stdout.write(
    `FileStreamSource  ${fmt(results.source!)} rec/s   plain producer   ${fmt(results.producer!)} rec/s   ratio ${(median(results.source!) / median(results.producer!)).toFixed(2)}\n`,
  );
  process.stdout.write(
    `PostgreSQL sink   ${fmt(results.sink!)} rec/s   batched INSERT   ${fmt(results.insert!)} rec/s   ratio ${(median(results.sink!) / median(results.insert!)).toFixed(2)}\n`,
  );
}
