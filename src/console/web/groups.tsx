// The consumer groups pages: the list, and one group's members, assignments and lag per partition (refreshed every
// two seconds, so a consumer catching up is seen doing it), with an offset reset for a group without members.

import { useState } from 'preact/hooks';
import type { GroupSummary, GroupView, ResetOffsetsRequest, ResetOffsetsResult } from '../api-types.js';
import { ActionResult, api, Confirm, href, Status, useAction, useApi } from './common.js';

export function GroupsView() {
  const loaded = useApi<GroupSummary[]>('/groups', 5_000);
  return (
    <section>
      <h2>Consumer groups</h2>
      <Status loaded={loaded}>
        {(groups) =>
          groups.length === 0 ? (
            <p class="meta">No groups.</p>
          ) : (
            <table data-test="groups">
              <thead>
                <tr>
                  <th>group</th>
                  <th>state</th>
                  <th>protocol type</th>
                  <th class="num">coordinator</th>
                </tr>
              </thead>
              <tbody>
                {groups.map((g) => (
                  <tr key={g.groupId}>
                    <td>
                      <a href={href('groups', g.groupId)}>{g.groupId}</a>
                    </td>
                    <td>{g.state}</td>
                    <td>{g.protocolType || '-'}</td>
                    <td class="num">{g.coordinator}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Status>
    </section>
  );
}

export function GroupPage({ groupId }: { groupId: string }) {
  const loaded = useApi<GroupView>(`/groups/${encodeURIComponent(groupId)}`, 2_000);
  return (
    <section>
      <h2>
        <a href={href('groups')}>Consumer groups</a> / {groupId}
      </h2>
      <Status loaded={loaded}>
        {(g) => (
          <>
            <p class="meta">
              state <b data-test="group-state">{g.state}</b>, protocol {g.protocolType || '-'}
              {g.protocol ? ` (${g.protocol})` : ''}, coordinator {g.coordinator}, total lag{' '}
              <b data-test="total-lag">{g.totalLag}</b>
            </p>
            <h3>Members</h3>
            {g.members.length === 0 ? (
              <p class="meta">No active members.</p>
            ) : (
              <table data-test="members">
                <thead>
                  <tr>
                    <th>member</th>
                    <th>client id</th>
                    <th>host</th>
                    <th>assignment</th>
                  </tr>
                </thead>
                <tbody>
                  {g.members.map((m) => (
                    <tr key={m.memberId}>
                      <td>
                        <code>{m.memberId}</code>
                        {m.groupInstanceId ? ` (${m.groupInstanceId})` : ''}
                      </td>
                      <td>{m.clientId}</td>
                      <td>{m.clientHost}</td>
                      <td>{m.assignment.map((a) => `${a.topic}-${a.partition}`).join(', ')}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <h3>Offsets and lag</h3>
            <table data-test="lag">
              <thead>
                <tr>
                  <th>topic</th>
                  <th class="num">partition</th>
                  <th class="num">committed</th>
                  <th class="num">end offset</th>
                  <th class="num">lag</th>
                  <th>member</th>
                </tr>
              </thead>
              <tbody>
                {g.offsets.map((o) => (
                  <tr key={`${o.topic}-${o.partition}`}>
                    <td>
                      <a href={href('topics', o.topic)}>{o.topic}</a>
                    </td>
                    <td class="num">{o.partition}</td>
                    <td class="num">{o.committedOffset ?? '-'}</td>
                    <td class="num">{o.endOffset ?? '-'}</td>
                    <td class={(o.lag ?? 0) > 0 ? 'num warn' : 'num'} data-test="partition-lag">
                      {o.lag ?? '-'}
                    </td>
                    <td>
                      <code>{o.memberId ?? '-'}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Reset groupId={g.groupId} members={g.members.length} reload={loaded.reload} />
          </>
        )}
      </Status>
    </section>
  );
}

function Reset({ groupId, members, reload }: { groupId: string; members: number; reload: () => void }) {
  const [topic, setTopic] = useState('');
  const [to, setTo] = useState<ResetOffsetsRequest['to']>('earliest');
  const [value, setValue] = useState('');
  const action = useAction();
  return (
    <div class="panel">
      <h3>Reset offsets</h3>
      {members > 0 ? (
        <p class="meta">The group has active members; Kafka resets only a group without them.</p>
      ) : null}
      <div class="row">
        <label>
          topic{' '}
          <input
            name="topic"
            placeholder="every committed partition"
            value={topic}
            onInput={(e) => setTopic(e.currentTarget.value)}
          />
        </label>
        <label>
          to{' '}
          <select
            name="to"
            value={to}
            onChange={(e) => setTo(e.currentTarget.value as ResetOffsetsRequest['to'])}
          >
            <option value="earliest">earliest</option>
            <option value="latest">latest</option>
            <option value="offset">offset</option>
            <option value="timestamp">timestamp (ms)</option>
          </select>
        </label>
        {to === 'offset' || to === 'timestamp' ? (
          <label>
            value{' '}
            <input
              name="value"
              type="number"
              min="0"
              value={value}
              onInput={(e) => setValue(e.currentTarget.value)}
            />
          </label>
        ) : null}
        <Confirm
          label="Reset offsets"
          question={`Move ${groupId}'s committed offsets?`}
          disabled={action.busy}
          onConfirm={() =>
            action.run(async () => {
              const body: ResetOffsetsRequest = { to };
              if (topic !== '') body.topic = topic;
              if (to === 'offset' || to === 'timestamp') body.value = Number(value);
              const r = await api<ResetOffsetsResult>(
                'POST',
                `/groups/${encodeURIComponent(groupId)}/reset-offsets`,
                body,
              );
              reload();
              const failed = r.partitions.filter((p) => p.error !== null);
              if (failed.length > 0)
                throw new Error(failed.map((p) => `${p.topic}-${p.partition}: ${p.error}`).join('; '));
              return `reset ${r.partitions.length} partition(s)`;
            })
          }
        />
      </div>
      <ActionResult action={action} />
    </div>
  );
}
