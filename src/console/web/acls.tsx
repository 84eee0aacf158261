// The ACLs view: the cluster's bindings (DescribeAcls) filtered by resource type, resource name, pattern type and
// principal; a form that adds one binding (CreateAcls); a delete button per row that asks before it deletes that
// exact binding (DeleteAcls). The broker's refusals (not authorized, no authorizer) show as errors in the page.

import { useState } from 'preact/hooks';
import type { AclsResult, AclView } from '../api-types.js';
import { ActionResult, api, Confirm, Status, useAction, useApi } from './common.js';

const RESOURCE_TYPES = ['Topic', 'Group', 'Cluster', 'TransactionalId', 'DelegationToken', 'User'];
const OPERATIONS = [
  'All',
  'Read',
  'Write',
  'Create',
  'Delete',
  'Alter',
  'Describe',
  'ClusterAction',
  'DescribeConfigs',
  'AlterConfigs',
  'IdempotentWrite',
  'CreateTokens',
  'DescribeTokens',
];

interface Filter {
  resourceType: string;
  resourceName: string;
  patternType: string;
  principal: string;
}

const NO_FILTER: Filter = { resourceType: '', resourceName: '', patternType: '', principal: '' };

function query(filter: Filter): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filter)) if (v !== '') params.set(k, v);
  const text = params.toString();
  return text === '' ? '/acls' : `/acls?${text}`;
}

export function AclsView() {
  const [filter, setFilter] = useState<Filter>(NO_FILTER);
  const acls = useApi<AclsResult>(query(filter));
  return (
    <>
      <h2>ACLs</h2>
      <AddAcl onAdded={acls.reload} />
      <AclFilter onApply={setFilter} />
      <Status loaded={acls}>
        {(a) =>
          !a.enabled ? (
            <p class="meta" data-test="acls-disabled">
              {a.message}
            </p>
          ) : a.acls.length === 0 ? (
            <p class="meta" data-test="acls-none">
              No ACLs{filter === NO_FILTER ? '' : ' match the filter'}.
            </p>
          ) : (
            <AclTable acls={a.acls} onDeleted={acls.reload} />
          )
        }
      </Status>
    </>
  );
}

function AclFilter({ onApply }: { onApply: (f: Filter) => void }) {
  const [f, setF] = useState<Filter>(NO_FILTER);
  const set = (k: keyof Filter) => (e: { currentTarget: { value: string } }) =>
    setF({ ...f, [k]: e.currentTarget.value });
  return (
    <form
      class="row"
      data-test="acl-filter"
      onSubmit={(e) => {
        e.preventDefault();
        onApply({ ...f });
      }}
    >
      <label>
        resource type{' '}
        <select name="resourceType" value={f.resourceType} onChange={set('resourceType')}>
          <option value="">any</option>
          {RESOURCE_TYPES.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </label>
      <label>
        resource name <input name="resourceName" value={f.resourceName} onInput={set('resourceName')} />
      </label>
      <label>
        pattern{' '}
        <select name="patternType" value={f.patternType} onChange={set('patternType')}>
          <option value="">any</option>
          <option value="MATCH">match (applies to the name)</option>
          <option value="LITERAL">literal</option>
          <option value="PREFIXED">prefixed</option>
        </select>
      </label>
      <label>
        principal{' '}
        <input name="principal" placeholder="User:alice" value={f.principal} onInput={set('principal')} />
      </label>
      <button type="submit">Filter</button>
      <button
        type="button"
        onClick={() => {
          setF(NO_FILTER);
          onApply(NO_FILTER);
        }}
      >
        Clear
      </button>
    </form>
  );
}

function AclTable({ acls, onDeleted }: { acls: AclView[]; onDeleted: () => void }) {
  return (
    <table data-test="acls">
      <thead>
        <tr>
          <th>principal</th>
          <th>permission</th>
          <th>operation</th>
          <th>resource</th>
          <th>pattern</th>
          <th>host</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {acls.map((x) => (
          <AclRow
            key={`${x.principal}|${x.permission}|${x.operation}|${x.resourceType}|${x.resourceName}|${x.patternType}|${x.host}`}
            acl={x}
            onDeleted={onDeleted}
          />
        ))}
      </tbody>
    </table>
  );
}

function AclRow({ acl, onDeleted }: { acl: AclView; onDeleted: () => void }) {
  const action = useAction();
  return (
    <tr data-acl={`${acl.principal} ${acl.operation} ${acl.resourceType}:${acl.resourceName}`}>
      <td>{acl.principal}</td>
      <td class={acl.permission === 'Deny' ? 'bad' : ''}>{acl.permission}</td>
      <td>{acl.operation}</td>
      <td>
        {acl.resourceType}:<code>{acl.resourceName}</code>
      </td>
      <td>{acl.patternType}</td>
      <td>{acl.host}</td>
      <td>
        <Confirm
          label="Delete"
          question={`Delete ${acl.permission} ${acl.operation} for ${acl.principal}?`}
          disabled={action.busy}
          onConfirm={() =>
            action.run(async () => {
              await api('DELETE', '/acls', { ...acl, confirm: true });
              onDeleted();
              return 'deleted';
            })
          }
        />
        <ActionResult action={action} />
      </td>
    </tr>
  );
}

function AddAcl({ onAdded }: { onAdded: () => void }) {
  const [acl, setAcl] = useState<AclView>({
    principal: '',
    host: '*',
    operation: 'Read',
    permission: 'Allow',
    resourceType: 'Topic',
    resourceName: '',
    patternType: 'LITERAL',
  });
  const set = (k: keyof AclView) => (e: { currentTarget: { value: string } }) => {
    const value = e.currentTarget.value;
    // A cluster has one name; fill it in rather than let the broker refuse another.
    const name = k === 'resourceType' && value === 'Cluster' ? { resourceName: 'kafka-cluster' } : {};
    setAcl({ ...acl, [k]: value, ...name });
  };
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    action.run(async () => {
      const added = await api<AclView>('POST', '/acls', acl);
      onAdded();
      return `added ${added.permission} ${added.operation} on ${added.resourceType}:${added.resourceName} for ${added.principal}`;
    });
  };
  return (
    <details class="panel">
      <summary>Add an ACL</summary>
      <form onSubmit={submit} data-test="add-acl">
        <label>
          principal{' '}
          <input
            name="principal"
            required
            placeholder="User:alice"
            value={acl.principal}
            onInput={set('principal')}
          />
        </label>
        <label>
          host <input name="host" value={acl.host} onInput={set('host')} />
        </label>
        <label>
          permission{' '}
          <select name="permission" value={acl.permission} onChange={set('permission')}>
            <option>Allow</option>
            <option>Deny</option>
          </select>
        </label>
        <label>
          operation{' '}
          <select name="operation" value={acl.operation} onChange={set('operation')}>
            {OPERATIONS.map((o) => (
              <option key={o}>{o}</option>
            ))}
          </select>
        </label>
        <label>
          resource type{' '}
          <select name="resourceType" value={acl.resourceType} onChange={set('resourceType')}>
            {RESOURCE_TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          resource name{' '}
          <input name="resourceName" required value={acl.resourceName} onInput={set('resourceName')} />
        </label>
        <label>
          pattern{' '}
          <select name="patternType" value={acl.patternType} onChange={set('patternType')}>
            <option value="LITERAL">literal</option>
            <option value="PREFIXED">prefixed</option>
          </select>
        </label>
        <button type="submit" disabled={action.busy}>
          Add
        </button>
        <ActionResult action={action} />
      </form>
    </details>
  );
}
