// The brokers page: the cluster id, the controller, and each broker's address, rack, state, replicas and leaders
// it holds, and its log directories' usage. Refreshed every few seconds.

import type { ClusterView } from '../api-types.js';
import { formatBytes } from '../format.js';
import { Status, useApi } from './common.js';

export function BrokersView() {
  const loaded = useApi<ClusterView>('/cluster', 5_000);
  return (
    <section>
      <h2>Brokers</h2>
      <Status loaded={loaded}>
        {(c) => (
          <>
            <p class="meta">
              Cluster <code>{c.clusterId ?? '(no id)'}</code>, controller <b>{c.controllerId}</b>,{' '}
              {c.brokers.length} broker(s)
            </p>
            <table data-test="brokers">
              <thead>
                <tr>
                  <th>id</th>
                  <th>address</th>
                  <th>rack</th>
                  <th>state</th>
                  <th class="num">replicas</th>
                  <th class="num">leaders</th>
                  <th>log dirs</th>
                </tr>
              </thead>
              <tbody>
                {c.brokers.map((b) => (
                  <tr key={b.nodeId}>
                    <td>
                      {b.nodeId}
                      {b.isController ? <span class="badge">controller</span> : null}
                    </td>
                    <td>
                      {b.host}:{b.port}
                    </td>
                    <td>{b.rack ?? '-'}</td>
                    <td>
                      <span class={b.state === 'online' ? 'state good' : 'state bad'} title={b.error ?? ''}>
                        {b.state}
                      </span>
                    </td>
                    <td class="num">{b.partitions}</td>
                    <td class="num">{b.leaders}</td>
                    <td>
                      {b.logDirs.map((d) => (
                        <div key={d.path}>
                          <code>{d.path}</code> {formatBytes(d.sizeBytes)} used by logs,{' '}
                          {formatBytes(d.usableBytes)} free of {formatBytes(d.totalBytes)}
                          {d.error ? <span class="state bad">{d.error}</span> : null}
                        </div>
                      ))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </Status>
    </section>
  );
}
