// ACLs (DescribeAcls, every binding) and client quotas (DescribeClientQuotas, every entity), read only: changes go
// through `brook acls` and `brook client-quotas`, where they are scripted and reviewed.

import type { AclsResult, QuotaView } from '../api-types.js';
import { Status, useApi } from './common.js';

export function SecurityView() {
  const acls = useApi<AclsResult>('/acls');
  const quotas = useApi<QuotaView[]>('/quotas');
  return (
    <section>
      <h2>ACLs</h2>
      <Status loaded={acls}>
        {(a) =>
          !a.enabled ? (
            <p class="meta" data-test="acls-disabled">
              {a.message}
            </p>
          ) : a.acls.length === 0 ? (
            <p class="meta">No ACLs.</p>
          ) : (
            <table data-test="acls">
              <thead>
                <tr>
                  <th>principal</th>
                  <th>permission</th>
                  <th>operation</th>
                  <th>resource</th>
                  <th>pattern</th>
                  <th>host</th>
                </tr>
              </thead>
              <tbody>
                {a.acls.map((x) => (
                  <tr
                    key={`${x.principal}|${x.permission}|${x.operation}|${x.resourceType}|${x.resourceName}|${x.patternType}|${x.host}`}
                  >
                    <td>{x.principal}</td>
                    <td class={x.permission === 'Deny' ? 'bad' : ''}>{x.permission}</td>
                    <td>{x.operation}</td>
                    <td>
                      {x.resourceType}:<code>{x.resourceName}</code>
                    </td>
                    <td>{x.patternType}</td>
                    <td>{x.host}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Status>
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
