// Listeners at runtime, as Kafka's DynamicListenerConfig (KIP-226): `listeners`, `advertised.listeners` and
// `listener.security.protocol.map` altered per broker with IncrementalAlterConfigs (/config/brokers/<id>), and the
// SASL settings of each listener (sasl.enabled.mechanisms, sasl.jaas.config, broker-wide or
// listener.name.<l>[.<mechanism>].*).
//
// Checked when altered (listenerChangeRefusal, called by the AlterConfigs handlers): Kafka's
// validateReconfiguration rules (an existing listener keeps its security protocol; what resolveBrokerConfig
// already checks: advertised listeners are listeners, every listener has a protocol, the inter-broker listener
// stays advertised, so it cannot be removed), and that a listener added with TLS can load its certificates and
// every SASL listener its settings, so a change that would fail to apply is refused instead of stored.
//
// Applied on every broker layer reload (DynamicListeners.configChanged), in Kafka's order: listeners removed are
// stopped and their connections closed, listeners added are bound (a listener whose address or protocol changed
// is both), the TLS reloader watches the new set, SASL handshakes see the new settings, and when the advertised
// endpoints changed the broker's registration is rewritten so that the controller sends every broker (and so
// every client's Metadata) the new endpoints. Changes apply one after another, in the order they arrive.

import { type BrokerConfig, resolveBrokerConfig } from '../broker/config/broker-config.js';
import { ConfigError } from '../broker/config/config-error.js';
import { ConfigErrorCode } from '../broker/config/config-error-codes.js';
import { type BrokerConfigLayers, mergeBrokerLayers } from '../broker/config/config-layers.js';
import type { Listener } from '../broker/config/listeners.js';
import type { Logger } from '../common/logger.js';
import type { BrokerEndpoint } from '../controller/zk-layout/index.js';
import type { BoundAddress, SocketServer } from '../network/socket-server.js';
import type { CertificateReloader } from './certificate-reload.js';
import { securedListener } from './listeners.js';
import { type ListenerSasl, listenerSaslSettings, type SaslAuthenticator } from './sasl/authenticator.js';

/**
 * The endpoints a broker registers: its advertised listeners, a port 0 replaced by the port the listener is bound
 * to and an empty host by its bound address. A listener not bound (its bind failed) is left out.
 */
export function advertisedEndpoints(
  advertised: readonly Listener[],
  bound: (listenerName: string) => BoundAddress | null,
): BrokerEndpoint[] {
  const endpoints: BrokerEndpoint[] = [];
  for (const l of advertised) {
    const b = bound(l.name);
    if (b === null) continue;
    const port = l.port === 0 ? b.port : l.port;
    const host = l.host === '' ? b.host : l.host;
    endpoints.push({ listenerName: l.name, securityProtocol: l.securityProtocol, host, port });
  }
  return endpoints;
}

/** The keys whose change can touch listeners or their SASL settings. */
function listenerKey(name: string): boolean {
  return (
    name === 'listeners' ||
    name === 'advertised.listeners' ||
    name === 'listener.security.protocol.map' ||
    name === 'connections.max.reauth.ms' ||
    name.startsWith('sasl.') ||
    name.startsWith('listener.name.')
  );
}

/** The listener-related settings of a merged config, as one comparable text. */
function listenerFingerprint(merged: ReadonlyMap<string, string>): string {
  return [...merged.keys()]
    .filter(listenerKey)
    .sort()
    .map((k) => `${k}=${merged.get(k)}`)
    .join('\n');
}

function sameAddress(a: Listener, b: Listener): boolean {
  return a.host === b.host && a.port === b.port && a.securityProtocol === b.securityProtocol;
}

export interface ListenerChangeRefusal {
  readonly ok: false;
  readonly errorCode: ConfigErrorCode;
  readonly errorMessage: string;
}

/**
 * Whether the new content of a dynamic broker layer may be stored, as far as listeners go: null when it may (or
 * touches no listener key), else Kafka's error code and a message. The rest of the layer was validated already.
 */
export function listenerChangeRefusal(
  layers: BrokerConfigLayers,
  perBroker: boolean,
  configs: ReadonlyMap<string, string>,
  resourceName: string,
): ListenerChangeRefusal | null {
  const before = mergeBrokerLayers(layers);
  const after = mergeBrokerLayers(
    perBroker ? { ...layers, dynamicBroker: configs } : { ...layers, dynamicDefault: configs },
  );
  if (listenerFingerprint(before) === listenerFingerprint(after)) return null;
  // Both resolve as a rule: the layers in force were accepted, and validateDynamicBrokerConfigs resolved the new
  // ones. Layers in force that no longer resolve (changed by another broker meanwhile) leave nothing to compare.
  let current: BrokerConfig;
  let next: BrokerConfig;
  try {
    current = resolveBrokerConfig(before);
    next = resolveBrokerConfig(after);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { ok: false, errorCode: ConfigErrorCode.INVALID_REQUEST, errorMessage: err.message };
  }
  // Kafka answers its reconfiguration rules INVALID_REQUEST, naming the resource.
  const invalidRequest = (rule: string): ListenerChangeRefusal => ({
    ok: false,
    errorCode: ConfigErrorCode.INVALID_REQUEST,
    errorMessage: `Invalid config value for resource ConfigResource(type=BROKER, name='${resourceName}'): Invalid dynamic configuration: ${rule}`,
  });
  for (const l of next.listeners) {
    const old = current.listeners.find((c) => c.name === l.name);
    if (old !== undefined && old.securityProtocol !== l.securityProtocol) {
      return invalidRequest(`Security protocol cannot be updated for existing listener ${l.name}`);
    }
  }
  // Settings that would not load are refused INVALID_REQUEST too: Kafka 3.9 validates a broker change on the
  // receiving broker (ConfigAdminManager.preprocess), which answers every refused reconfiguration so.
  try {
    for (const l of next.listeners) {
      const old = current.listeners.find((c) => c.name === l.name);
      if (old === undefined || !sameAddress(old, l)) securedListener(next, l);
    }
    listenerSaslSettings(next);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { ok: false, errorCode: ConfigErrorCode.INVALID_REQUEST, errorMessage: err.message };
  }
  return null;
}

export interface DynamicListenersOptions {
  /** The broker's config as its listeners were bound at start. */
  readonly initial: BrokerConfig;
  readonly server: SocketServer;
  readonly certificates: CertificateReloader | null;
  /** The authenticator, once the broker's services exist. */
  readonly sasl: () => SaslAuthenticator | null;
  /** Publishes new advertised endpoints (rewrites the broker's registration). */
  readonly advertise: (endpoints: BrokerEndpoint[]) => Promise<void>;
  /** Told the listeners bound after each change (what depends on how many there are). */
  readonly listenersChanged?: (listeners: readonly Listener[]) => void;
  readonly logger: Logger;
}

export class DynamicListeners {
  /** The config the listeners and SASL settings follow now. */
  private current: BrokerConfig;
  private fingerprint: string;
  private saslSettings: Map<string, ListenerSasl>;
  private advertised: string;
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly options: DynamicListenersOptions) {
    this.current = options.initial;
    this.fingerprint = listenerFingerprint(options.initial.values.originals);
    this.saslSettings = listenerSaslSettings(options.initial);
    this.advertised = JSON.stringify(this.endpoints());
  }

  /** The SASL settings in force, for the authenticator created after the first reload. */
  sasl(): Map<string, ListenerSasl> {
    return this.saslSettings;
  }

  /** The endpoints to register now. */
  endpoints(): BrokerEndpoint[] {
    const { server } = this.options;
    const bound = new Set(server.listenerNames());
    return advertisedEndpoints(this.current.advertisedListeners, (name) =>
      bound.has(name) ? server.address(name) : null,
    );
  }

  /** The broker's dynamic layers were reloaded: apply what changed for listeners (after earlier changes). */
  configChanged(merged: ReadonlyMap<string, string>): void {
    const fingerprint = listenerFingerprint(merged);
    if (fingerprint === this.fingerprint) return;
    this.fingerprint = fingerprint;
    const snapshot = new Map(merged);
    this.queue = this.queue
      .then(() => this.apply(snapshot))
      .catch((err: unknown) =>
        this.options.logger.error(`dynamic listener change not applied: ${String(err)}`),
      );
  }

  /** Resolves once every change received so far is applied (tests, and stop). */
  settled(): Promise<void> {
    return this.queue;
  }

  private async apply(merged: ReadonlyMap<string, string>): Promise<void> {
    const { server, certificates, logger } = this.options;
    let next: BrokerConfig;
    try {
      next = resolveBrokerConfig(merged);
    } catch (err) {
      // Validated when written; a combination of layers that no longer resolves leaves the listeners as they are.
      logger.warn(`dynamic listener configs not applied: ${(err as Error).message}`);
      return;
    }
    const previous = this.current;
    const kept = (l: Listener, others: readonly Listener[]) =>
      others.some((o) => o.name === l.name && sameAddress(o, l));
    const removed = previous.listeners.filter((l) => !kept(l, next.listeners));
    const added = next.listeners.filter((l) => !kept(l, previous.listeners));
    this.current = next;
    for (const l of removed) {
      await server.removeListener(l.name);
    }
    for (const l of added) {
      try {
        const address = await server.addListener(securedListener(next, l));
        logger.info(`listener ${l.name} added`, {
          securityProtocol: l.securityProtocol,
          host: address.host,
          port: address.port,
        });
      } catch (err) {
        logger.error(`listener ${l.name} could not be added: ${(err as Error).message}`);
      }
    }
    const bound = new Set(server.listenerNames());
    const boundListeners = next.listeners.filter((l) => bound.has(l.name));
    certificates?.setListeners(boundListeners, next.values);
    this.options.listenersChanged?.(boundListeners);
    try {
      this.saslSettings = listenerSaslSettings(next);
      this.options.sasl()?.updateListeners(this.saslSettings);
    } catch (err) {
      logger.warn(`dynamic SASL settings not applied: ${(err as Error).message}`);
    }
    const endpoints = this.endpoints();
    const advertised = JSON.stringify(endpoints);
    if (advertised !== this.advertised) {
      this.advertised = advertised;
      logger.info('advertised endpoints changed', {
        endpoints: endpoints.map((e) => `${e.listenerName}://${e.host}:${e.port}`).join(','),
      });
      await this.options.advertise(endpoints);
    }
  }
}
