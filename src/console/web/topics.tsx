// The topics pages: the list with a form to create a topic, and one topic's partitions (leader, replicas, ISR,
// offsets, sizes), configs (edit, reset to default), adding partitions and deleting the topic (the name typed
// again, then a second click).

import { useState } from 'preact/hooks';
import type { ConfigView, TopicSummary, TopicView } from '../api-types.js';
import { formatBytes } from '../format.js';
import { ActionResult, api, Confirm, href, parsePairs, Status, useAction, useApi } from './common.js';
import { MessagesView } from './messages.js';

export function TopicsView() {
  const loaded = useApi<TopicSummary[]>('/topics', 10_000);
  const [internal, setInternal] = useState(false);
  return (
    <section>
      <h2>Topics</h2>
      <CreateTopic onCreated={(name) => (location.hash = href('topics', name))} />
      <label class="inline">
        <input type="checkbox" checked={internal} onChange={(e) => setInternal(e.currentTarget.checked)} />{' '}
        show internal topics
      </label>
      <Status loaded={loaded}>
        {(topics) => (
          <table data-test="topics">
            <thead>
              <tr>
                <th>topic</th>
                <th class="num">partitions</th>
                <th class="num">replication</th>
                <th class="num">under-replicated</th>
                <th class="num">offline</th>
                <th class="num">size</th>
              </tr>
            </thead>
            <tbody>
              {topics
                .filter((t) => internal || !t.internal)
                .map((t) => (
                  <tr key={t.name}>
                    <td>
                      <a href={href('topics', t.name)}>{t.name}</a>
                      {t.internal ? <span class="badge">internal</span> : null}
                    </td>
                    <td class="num">{t.partitions}</td>
                    <td class="num">{t.replicationFactor}</td>
                    <td class={t.underReplicated > 0 ? 'num bad' : 'num'}>{t.underReplicated}</td>
                    <td class={t.offline > 0 ? 'num bad' : 'num'}>{t.offline}</td>
                    <td class="num">{formatBytes(t.sizeBytes)}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        )}
      </Status>
    </section>
  );
}

function CreateTopic({ onCreated }: { onCreated: (name: string) => void }) {
  const [name, setName] = useState('');
  const [partitions, setPartitions] = useState('');
  const [replication, setReplication] = useState('');
  const [configs, setConfigs] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    action.run(async () => {
      await api('POST', '/topics', {
        name,
        partitions: partitions === '' ? undefined : Number(partitions),
        replicationFactor: replication === '' ? undefined : Number(replication),
        configs: parsePairs(configs),
      });
      onCreated(name);
      return `created ${name}`;
    });
  };
  return (
    <details class="panel">
      <summary>Create a topic</summary>
      <form onSubmit={submit} data-test="create-topic">
        <label>
          name <input name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          partitions{' '}
          <input
            name="partitions"
            type="number"
            min="1"
            placeholder="broker default"
            value={partitions}
            onInput={(e) => setPartitions(e.currentTarget.value)}
          />
        </label>
        <label>
          replication factor{' '}
          <input
            name="replicationFactor"
            type="number"
            min="1"
            placeholder="broker default"
            value={replication}
            onInput={(e) => setReplication(e.currentTarget.value)}
          />
        </label>
        <label class="wide">
          configs (key=value, one a line){' '}
          <textarea
            name="configs"
            rows={2}
            placeholder="retention.ms=604800000"
            value={configs}
            onInput={(e) => setConfigs(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={action.busy}>
          Create
        </button>
        <ActionResult action={action} />
      </form>
    </details>
  );
}

export function TopicPage({ name, tab }: { name: string; tab: string }) {
  const loaded = useApi<TopicView>(
    `/topics/${encodeURIComponent(name)}`,
    tab === 'messages' ? undefined : 10_000,
  );
  return (
    <section>
      <h2>
        <a href={href('topics')}>Topics</a> / {name}
      </h2>
      <nav class="tabs">
        {['partitions', 'configs', 'messages'].map((t) => (
          <a key={t} href={href('topics', name, t)} class={tab === t ? 'active' : ''}>
            {t}
          </a>
        ))}
      </nav>
      {tab === 'messages' ? (
        <MessagesView topic={name} partitions={loaded.data?.partitions.length ?? 0} />
      ) : (
        <Status loaded={loaded}>
          {(t) =>
            tab === 'configs' ? (
              <Configs topic={t.name} configs={t.configs} reload={loaded.reload} />
            ) : (
              <Partitions topic={t} reload={loaded.reload} />
            )
          }
        </Status>
      )}
    </section>
  );
}

function Partitions({ topic, reload }: { topic: TopicView; reload: () => void }) {
  const [count, setCount] = useState('');
  const [typed, setTyped] = useState('');
  const grow = useAction();
  const remove = useAction();
  const total = topic.partitions.reduce(
    (n, p) => n + Math.max(0, (p.latestOffset ?? 0) - (p.earliestOffset ?? 0)),
    0,
  );
  return (
    <>
      <p class="meta">
        id <code>{topic.topicId}</code>, {topic.partitions.length} partition(s), {total} record(s) between the
        log start and end offsets
      </p>
      <table data-test="partitions">
        <thead>
          <tr>
            <th class="num">partition</th>
            <th class="num">leader</th>
            <th>replicas</th>
            <th>in-sync replicas</th>
            <th class="num">start offset</th>
            <th class="num">end offset</th>
            <th>size by replica</th>
          </tr>
        </thead>
        <tbody>
          {topic.partitions.map((p) => (
            <tr key={p.partition}>
              <td class="num">{p.partition}</td>
              <td class={p.leader < 0 ? 'num bad' : 'num'}>{p.leader < 0 ? 'none' : p.leader}</td>
              <td>{p.replicas.join(', ')}</td>
              <td class={p.isr.length < p.replicas.length ? 'bad' : ''}>{p.isr.join(', ')}</td>
              <td class="num">{p.earliestOffset ?? '-'}</td>
              <td class="num">{p.latestOffset ?? '-'}</td>
              <td>
                {Object.entries(p.sizeBytes)
                  .map(([b, n]) => `${b}: ${formatBytes(n)}`)
                  .join(', ') || '-'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="panel">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            grow.run(async () => {
              await api('POST', `/topics/${encodeURIComponent(topic.name)}/partitions`, {
                count: Number(count),
              });
              reload();
              return `${topic.name} now has ${count} partitions`;
            });
          }}
        >
          <label>
            new partition count{' '}
            <input
              name="count"
              type="number"
              min={topic.partitions.length + 1}
              required
              value={count}
              onInput={(e) => setCount(e.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={grow.busy}>
            Add partitions
          </button>
          <ActionResult action={grow} />
        </form>
      </div>
      <div class="panel danger-zone">
        <label>
          type the topic's name to delete it{' '}
          <input name="confirm-name" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
        </label>{' '}
        <Confirm
          label="Delete topic"
          question={`Delete ${topic.name} and all its records?`}
          disabled={typed !== topic.name || remove.busy}
          onConfirm={() =>
            remove.run(async () => {
              await api('DELETE', `/topics/${encodeURIComponent(topic.name)}`, { confirm: typed });
              location.hash = href('topics');
              return `deleted ${topic.name}`;
            })
          }
        />
        <ActionResult action={remove} />
      </div>
    </>
  );
}

function Configs({ topic, configs, reload }: { topic: string; configs: ConfigView[]; reload: () => void }) {
  const [editing, setEditing] = useState<string | null>(null);
  const [value, setValue] = useState('');
  const [onlySet, setOnlySet] = useState(false);
  const action = useAction();
  const save = (name: string, v: string | null) =>
    action.run(async () => {
      await api('POST', `/topics/${encodeURIComponent(topic)}/configs`, { set: { [name]: v } });
      setEditing(null);
      reload();
      return v === null ? `${name} reset to its default` : `${name} set to ${v}`;
    });
  return (
    <>
      <label class="inline">
        <input type="checkbox" checked={onlySet} onChange={(e) => setOnlySet(e.currentTarget.checked)} /> only
        values set on this topic
      </label>
      <ActionResult action={action} />
      <table data-test="configs">
        <thead>
          <tr>
            <th>config</th>
            <th>value</th>
            <th>source</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {configs
            .filter((c) => !onlySet || c.source === 'DYNAMIC_TOPIC_CONFIG')
            .map((c) => (
              <tr key={c.name} class={c.source === 'DYNAMIC_TOPIC_CONFIG' ? 'set' : ''} data-config={c.name}>
                <td>
                  <code>{c.name}</code>
                </td>
                <td>
                  {editing === c.name ? (
                    <form
                      class="row"
                      onSubmit={(e) => {
                        e.preventDefault();
                        save(c.name, value);
                      }}
                    >
                      <input name="value" value={value} onInput={(e) => setValue(e.currentTarget.value)} />
                      <button type="submit" disabled={action.busy}>
                        Save
                      </button>
                      <button type="button" onClick={() => setEditing(null)}>
                        Cancel
                      </button>
                    </form>
                  ) : c.sensitive ? (
                    '(sensitive)'
                  ) : (
                    <code>{c.value ?? '(null)'}</code>
                  )}
                </td>
                <td class="meta">{c.source}</td>
                <td>
                  {c.readOnly || editing === c.name ? null : (
                    <>
                      <button
                        type="button"
                        onClick={() => {
                          setEditing(c.name);
                          setValue(c.value ?? '');
                        }}
                      >
                        Edit
                      </button>
                      {c.source === 'DYNAMIC_TOPIC_CONFIG' ? (
                        <button type="button" onClick={() => save(c.name, null)}>
                          Reset
                        </button>
                      ) : null}
                    </>
                  )}
                </td>
              </tr>
            ))}
        </tbody>
      </table>
    </>
  );
}
