// The security page: ACLs (acls.tsx: listed, filtered, added and deleted) and client quotas (DescribeClientQuotas,
// every entity).

import type { QuotaView } from '../api-types.js';
import { AclsView } from './acls.js';
import { Status, useApi } from './common.js';

export function SecurityView() {
  const quotas = useApi<QuotaView[]>('/quotas');
  return (
    <section>
      <AclsView />
      <h2>Client quotas</h2>
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
                  <th>quotas</th>
                </tr>
              </thead>
              <tbody>
                {q.map((e) => (
                  <tr key={`${e.user}|${e.clientId}`}>
                    <td>{e.user === undefined ? '-' : (e.user ?? '(default)')}</td>
                    <td>{e.clientId === undefined ? '-' : (e.clientId ?? '(default)')}</td>
                    <td>
                      {Object.entries(e.values)
                        .map(([k, v]) => `${k}=${v}`)
                        .join(', ')}
                    </td>
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
