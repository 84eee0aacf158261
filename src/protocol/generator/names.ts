// Naming rules for generated code: field names are the camelCase of the specification's names, files are
// kebab-case, type names keep the specification's PascalCase.

/** `GroupInstanceId` -> `groupInstanceId`; only the first letter changes, as Kafka's own generator does. */
export function camelCase(name: string): string {
  return name.charAt(0).toLowerCase() + name.slice(1);
}

/** `OffsetForLeaderEpoch` -> `offset-for-leader-epoch`; `KRaftVersion` -> `k-raft-version`. */
export function kebabCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

/** `FetchRequest` -> `Fetch`: the API's name without its direction. */
export function apiBaseName(messageName: string): string {
  return messageName.replace(/(Request|Response)$/, '');
}

/** `ApiVersionsResponse` -> `API_VERSIONS_RESPONSE`. */
export function constantCase(name: string): string {
  return kebabCase(name).replace(/-/g, '_').toUpperCase();
}
