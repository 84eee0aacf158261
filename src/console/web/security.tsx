// The security page: ACLs (acls.tsx: listed, filtered, added and deleted) and client quotas (quotas.tsx: listed,
// set and removed).

import { AclsView } from './acls.js';
import { QuotasView } from './quotas.js';

export function SecurityView() {
  return (
    <section>
      <AclsView />
      <QuotasView />
    </section>
  );
}
