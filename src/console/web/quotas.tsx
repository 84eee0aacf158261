// The client quotas view: every entity with quotas (users, client ids, both, IPs, and the defaults, from
// DescribeClientQuotas) with its values; a form that sets a quota of any entity (AlterClientQuotas), filled in by a
// row's Edit; a Remove beside each value that asks before it removes that key.

import { useState } from 'preact/hooks';
import type { QuotaEntityView, QuotaView } from '../api-types.js';
import { ActionResult, api, Confirm, Status, useAction, useApi } from './common.js';

const CLIENT_KEYS = [
  'producer_byte_rate',
  'consumer_byte_rate',
  'request_percentage',
  'controller_mutation_rate',
];
const IP_KEYS = ['connection_creation_rate'];

type Part = 'user' | 'clientId' | 'ip';
/** One part of the form's entity: left out, the default entity, or a name. */
interface PartChoice {
  mode: 'none' | 'default' | 'name';
  name: string;
}
type EntityChoice = Record<Part, PartChoice>;

const NONE: PartChoice = { mode: 'none', name: '' };
const PART_LABELS: Record<Part, string> = { user: 'user', clientId: 'client id', ip: 'ip' };

function choiceOf(entity: QuotaEntityView): EntityChoice {
  const part = (v: string | null | undefined): PartChoice =>
    v === undefined ? NONE : v === null ? { mode: 'default', name: '' } : { mode: 'name', name: v };
  return { user: part(entity.user), clientId: part(entity.clientId), ip: part(entity.ip) };
}

function entityOf(choice: EntityChoice): QuotaEntityView {
  const entity: QuotaEntityView = {};
  for (const part of ['user', 'clientId', 'ip'] as Part[]) {
    const c = choice[part];
    if (c.mode !== 'none') entity[part] = c.mode === 'default' ? null : c.name;
  }
  return entity;
}

/** "user alice, client id (default)": the entity as the page names it. */
export function describeEntity(entity: QuotaEntityView): string {
  return (['user', 'clientId', 'ip'] as Part[])
    .filter((p) => entity[p] !== undefined)
    .map((p) => `${PART_LABELS[p]} ${entity[p] ?? '(default)'}`)
    .join(', ');
}

function cell(v: string | null | undefined) {
  return v === undefined ? <span class="meta">-</span> : v === null ? <em>(default)</em> : v;
}

export function QuotasView() {
  const quotas = useApi<QuotaView[]>('/quotas');
  const [editing, setEditing] = useState<{ choice: EntityChoice; generation: number }>({
    choice: { user: { mode: 'name', name: '' }, clientId: NONE, ip: NONE },
    generation: 0,
  });
  return (
    <>
      <h2>Client quotas</h2>
      <SetQuota key={editing.generation} initial={editing.choice} onSet={quotas.reload} />
      <Status loaded={quotas}>
        {(q) =>
          q.length === 0 ? (
            <p class="meta">No quotas.</p>
          ) : (
            <table data-test="quotas">
              <thead>
                <tr>
                  <th>user</th>
                  <th>client id</th>
                  <th>ip</th>
                  <th>quotas</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {q.map((e) => (
                  <tr key={describeEntity(e)} data-entity={describeEntity(e)}>
                    <td>{cell(e.user)}</td>
                    <td>{cell(e.clientId)}</td>
                    <td>{cell(e.ip)}</td>
                    <td>
                      {Object.entries(e.values).map(([k, v]) => (
                        <QuotaValue key={k} entity={e} quota={k} value={v} onRemoved={quotas.reload} />
                      ))}
                    </td>
                    <td>
                      <button
                        type="button"
                        onClick={() =>
                          setEditing({ choice: choiceOf(e), generation: editing.generation + 1 })
                        }
                      >
                        Edit
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Status>
    </>
  );
}

function QuotaValue({
  entity,
  quota,
  value,
  onRemoved,
}: {
  entity: QuotaView;
  quota: string;
  value: number;
  onRemoved: () => void;
}) {
  const action = useAction();
  const { values: _, ...parts } = entity;
  return (
    <div class="quota" data-quota={quota}>
      <code>
        {quota}={value}
      </code>{' '}
      <Confirm
        label="Remove"
        question={`Remove ${quota} of ${describeEntity(parts)}?`}
        disabled={action.busy}
        onConfirm={() =>
          action.run(async () => {
            await api('POST', '/quotas', { entity: parts, set: { [quota]: null } });
            onRemoved();
            return 'removed';
          })
        }
      />
      <ActionResult action={action} />
    </div>
  );
}

function SetQuota({ initial, onSet }: { initial: EntityChoice; onSet: () => void }) {
  const [choice, setChoice] = useState<EntityChoice>(initial);
  const isIp = choice.ip.mode !== 'none';
  const keys = isIp ? IP_KEYS : CLIENT_KEYS;
  const [key, setKey] = useState(keys[0]!);
  const [value, setValue] = useState('');
  const action = useAction();
  const shownKey = keys.includes(key) ? key : keys[0]!;
  const submit = (e: Event) => {
    e.preventDefault();
    action.run(async () => {
      const entity = entityOf(choice);
      await api('POST', '/quotas', { entity, set: { [shownKey]: value } });
      onSet();
      return `set ${shownKey}=${value} for ${describeEntity(entity)}`;
    });
  };
  return (
    <details class="panel" open={initial.user.name !== '' || initial.user.mode !== 'name'}>
      <summary>Set a quota</summary>
      <form onSubmit={submit} data-test="set-quota">
        {(['user', 'clientId', 'ip'] as Part[]).map((part) => (
          <label key={part}>
            {PART_LABELS[part]}{' '}
            <select
              name={`${part}-mode`}
              value={choice[part].mode}
              onChange={(e) =>
                setChoice({
                  ...choice,
                  [part]: { ...choice[part], mode: e.currentTarget.value as PartChoice['mode'] },
                })
              }
            >
              <option value="none">-</option>
              <option value="default">default</option>
              <option value="name">named</option>
            </select>{' '}
            {choice[part].mode === 'name' ? (
              <input
                name={part}
                required
                value={choice[part].name}
                onInput={(e) =>
                  setChoice({ ...choice, [part]: { mode: 'name', name: e.currentTarget.value } })
                }
              />
            ) : null}
          </label>
        ))}
        <label>
          quota{' '}
          <select name="key" value={shownKey} onChange={(e) => setKey(e.currentTarget.value)}>
            {keys.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
        <label>
          value{' '}
          <input
            name="value"
            type="number"
            step="any"
            required
            value={value}
            onInput={(e) => setValue(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={action.busy}>
          Set
        </button>
        <ActionResult action={action} />
      </form>
    </details>
  );
}
