// Kafka's ACL filters (ResourcePatternFilter, AccessControlEntryFilter) and the validation CreateAcls applies
// to a new binding, with the error texts Kafka answers.

import {
  type AclBinding,
  type AclBindingFilter,
  AclOperation,
  CLUSTER_RESOURCE_NAME,
  PatternType,
  PermissionType,
  type ResourcePattern,
  ResourceType,
  WILDCARD_RESOURCE,
} from './acl-types.js';

export function patternMatches(filter: AclBindingFilter, pattern: ResourcePattern): boolean {
  if (filter.resourceType !== ResourceType.ANY && filter.resourceType !== pattern.resourceType) return false;
  const pt = filter.patternType;
  if (pt !== PatternType.ANY && pt !== PatternType.MATCH && pt !== pattern.patternType) return false;
  if (filter.name === null) return true;
  if (pt === PatternType.ANY || pt === pattern.patternType) return filter.name === pattern.name;
  // MATCH: every pattern that would apply to a resource of this exact name.
  if (pattern.patternType === PatternType.LITERAL) {
    return filter.name === pattern.name || pattern.name === WILDCARD_RESOURCE;
  }
  return pattern.patternType === PatternType.PREFIXED && filter.name.startsWith(pattern.name);
}

export function bindingMatches(filter: AclBindingFilter, binding: AclBinding): boolean {
  const e = binding.entry;
  return (
    patternMatches(filter, binding.pattern) &&
    (filter.principal === null || filter.principal === e.principal) &&
    (filter.host === null || filter.host === e.host) &&
    (filter.operation === AclOperation.ANY || filter.operation === e.operation) &&
    (filter.permissionType === PermissionType.ANY || filter.permissionType === e.permissionType)
  );
}

/** Why a filter cannot match anything Kafka would store (an UNKNOWN code), or null. */
export function filterProblem(filter: AclBindingFilter): string | null {
  if (
    filter.resourceType === ResourceType.UNKNOWN ||
    filter.patternType === PatternType.UNKNOWN ||
    filter.operation === AclOperation.UNKNOWN ||
    filter.permissionType === PermissionType.UNKNOWN ||
    !inRange(filter.resourceType, 1, 7) ||
    !inRange(filter.patternType, 1, 4) ||
    !inRange(filter.operation, 1, 14) ||
    !inRange(filter.permissionType, 1, 3)
  ) {
    return 'The filter contains UNKNOWN elements';
  }
  return null;
}

function inRange(code: number, low: number, high: number): boolean {
  return code >= low && code <= high;
}

/** Why a binding cannot be created (Kafka answers INVALID_REQUEST with this text), or null. */
export function bindingProblem(binding: AclBinding): string | null {
  const { pattern, entry } = binding;
  if (
    !inRange(pattern.resourceType, 2, 7) ||
    (pattern.patternType !== PatternType.LITERAL && pattern.patternType !== PatternType.PREFIXED) ||
    !inRange(entry.operation, 2, 14) ||
    (entry.permissionType !== PermissionType.ALLOW && entry.permissionType !== PermissionType.DENY)
  ) {
    return 'Invalid ACL creation: the binding has an UNKNOWN or ANY element';
  }
  if (pattern.name.length === 0) return 'Invalid empty resource name';
  if (pattern.name.includes('/')) return `Invalid resource name ${pattern.name}: it contains '/'`;
  if (pattern.resourceType === ResourceType.CLUSTER && pattern.name !== CLUSTER_RESOURCE_NAME) {
    return `The only valid name for the CLUSTER resource is ${CLUSTER_RESOURCE_NAME}`;
  }
  const colon = entry.principal.indexOf(':');
  if (colon <= 0 || colon === entry.principal.length - 1) {
    return `Could not parse principal from \`${entry.principal}\` (no colon is present separating the principal type from the principal name)`;
  }
  if (entry.host.length === 0) return 'Invalid empty host';
  return null;
}
