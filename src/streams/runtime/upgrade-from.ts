// upgrade.from (Kafka's StreamsConfig.UPGRADE_FROM_CONFIG and UpgradeFromValues): the release a rolling upgrade
// starts from. During the first rolling bounce each new instance runs with it, so the group's old members can
// still read what it sends; the second bounce, without it, moves the group to the latest protocol.
//
// What it changes, as Kafka's AssignorConfiguration decides:
// - the subscription version (configuredMetadataVersion): 1 from 0.10.0, 2 from 0.10.1 to 1.1. Those releases
//   predate version probing (KIP-268, 2.0), so they cannot read a newer subscription even for its version;
//   from 2.0 on, version probing downgrades the group by itself and the version is left alone;
// - the rebalance protocol (rebalanceProtocol): eager from every release before 2.4, which had no cooperative
//   rebalancing (KIP-429); cooperative otherwise.
// Kafka also reads it for foreign-key joins (a subscription wrapper of version 0 from releases before 3.4); Brook
// does not (fk-join.ts writes version 1).

import { LATEST_SUPPORTED_VERSION } from './subscription-info.js';

/** Kafka 3.9's UpgradeFromValues, in order. */
export const UPGRADE_FROM_VALUES = [
  '0.10.0',
  '0.10.1',
  '0.10.2',
  '0.11.0',
  '1.0',
  '1.1',
  '2.0',
  '2.1',
  '2.2',
  '2.3',
  '2.4',
  '2.5',
  '2.6',
  '2.7',
  '2.8',
  '3.0',
  '3.1',
  '3.2',
  '3.3',
  '3.4',
  '3.5',
  '3.6',
  '3.7',
  '3.8',
] as const;

export type UpgradeFrom = (typeof UPGRADE_FROM_VALUES)[number];

export function isUpgradeFrom(value: unknown): value is UpgradeFrom {
  return typeof value === 'string' && (UPGRADE_FROM_VALUES as readonly string[]).includes(value);
}

const rank = (v: UpgradeFrom): number => UPGRADE_FROM_VALUES.indexOf(v);

/**
 * The subscription version an instance sends first (Kafka's configuredMetadataVersion): `latest` unless it
 * upgrades from a release without version probing.
 */
export function configuredMetadataVersion(
  upgradeFrom: UpgradeFrom | null,
  latest = LATEST_SUPPORTED_VERSION,
): number {
  if (upgradeFrom === null) return latest;
  if (upgradeFrom === '0.10.0') return 1;
  if (rank(upgradeFrom) <= rank('1.1')) return 2;
  return latest;
}

/** The rebalance protocol (Kafka's AssignorConfiguration.rebalanceProtocol): eager when upgrading from before 2.4. */
export function rebalanceProtocol(upgradeFrom: UpgradeFrom | null): 'eager' | 'cooperative' {
  return upgradeFrom !== null && rank(upgradeFrom) <= rank('2.3') ? 'eager' : 'cooperative';
}
