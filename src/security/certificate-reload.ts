// Certificates reload without a restart: the broker watches the key store and trust store files of each TLS
// listener (polling their modification time, as files replaced by a renewal tool or a mounted secret change) and,
// when one changes, loads the listener's TLS settings again and hands them to the socket server. Connections
// accepted from then on use the new certificates; open connections keep theirs. Settings that do not load (a
// file caught half-written, a key that does not match) are logged and the previous ones stay in use; the next
// change is tried again.
//
// KIP-226's route too: altering a listener's ssl.* keys (`listener.name.<l>.ssl.keystore.location` and the like)
// with IncrementalAlterConfigs on the broker resource reaches brokerConfigChanged(), which reloads each TLS
// listener whose ssl settings changed, from the merged static and dynamic configs, and watches the new files.
//
// Listeners added or removed at runtime (dynamic `listeners`) are told with setListeners(): a new listener is bound
// with its settings as they are then, and watched from there on.
//
// Lifecycle: start() after the listeners are bound, stop() at shutdown.

import { unwatchFile, watchFile } from 'node:fs';
import type { TlsOptions } from 'node:tls';
import type { BrokerConfig } from '../broker/config/broker-config.js';
import { BROKER_KEYS, brokerKey } from '../broker/config/broker-keys.js';
import type { Listener } from '../broker/config/listeners.js';
import { ParsedConfig } from '../broker/config/parsed-config.js';
import type { Logger } from '../common/logger.js';
import { usesTls } from '../network/security.js';
import { listenerTls, listenerTlsFiles } from './tls-listener.js';

/** How often the files' modification times are checked. */
const POLL_INTERVAL_MS = 1000;
/** A change is acted on once the files have been quiet this long, so that a multi-file update lands whole. */
const SETTLE_MS = 500;

export type ApplyTls = (listenerName: string, options: TlsOptions) => void;

export class CertificateReloader {
  private readonly watched: { file: string; onChange: () => void }[] = [];
  private readonly pending = new Map<string, NodeJS.Timeout>();
  /** The settings in force: the static config, then the merged static and dynamic configs. */
  private values: ParsedConfig;
  /** Per TLS listener, the raw text of the ssl keys that apply to it, to tell which listeners an alter touched. */
  private readonly sslSettings = new Map<string, string>();
  /** The listeners bound now: the configured ones, then as dynamic changes add and remove them. */
  private listeners: readonly Listener[];

  constructor(
    config: BrokerConfig,
    private readonly apply: ApplyTls,
    private readonly logger: Logger,
  ) {
    this.values = config.values;
    this.listeners = config.listeners;
    for (const listener of this.tlsListeners()) {
      this.sslSettings.set(listener, sslSettingsOf(config.values.originals, listener));
    }
  }

  private tlsListeners(): string[] {
    return this.listeners.filter((l) => usesTls(l.securityProtocol)).map((l) => l.name);
  }

  /**
   * The listeners bound now, after a dynamic change, with the config they were bound with: a
   * new TLS listener's files are watched from now on, a removed one's no longer.
   */
  setListeners(listeners: readonly Listener[], values: ParsedConfig): void {
    this.listeners = listeners;
    this.values = values;
    const names = new Set(this.tlsListeners());
    for (const name of [...this.sslSettings.keys()]) if (!names.has(name)) this.sslSettings.delete(name);
    for (const name of names) {
      if (!this.sslSettings.has(name)) this.sslSettings.set(name, sslSettingsOf(values.originals, name));
    }
    for (const { file, onChange } of this.watched.splice(0)) unwatchFile(file, onChange);
    this.start();
  }

  start(): void {
    for (const listener of this.listeners) {
      if (!usesTls(listener.securityProtocol)) continue;
      for (const file of listenerTlsFiles(this.values, listener.name)) {
        const onChange = () => this.schedule(listener.name);
        watchFile(file, { interval: POLL_INTERVAL_MS, persistent: false }, onChange);
        this.watched.push({ file, onChange });
      }
    }
  }

  stop(): void {
    for (const { file, onChange } of this.watched.splice(0)) unwatchFile(file, onChange);
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
  }

  /** The broker's dynamic configs changed (KIP-226): reload the TLS listeners whose ssl settings did. */
  brokerConfigChanged(merged: ReadonlyMap<string, string>): void {
    const changed = this.tlsListeners().filter(
      (listener) => sslSettingsOf(merged, listener) !== this.sslSettings.get(listener),
    );
    if (changed.length === 0) return;
    this.values = ParsedConfig.parse(BROKER_KEYS, merged, brokerKey);
    for (const listener of changed) this.sslSettings.set(listener, sslSettingsOf(merged, listener));
    // Watch the files the settings now name.
    for (const { file, onChange } of this.watched.splice(0)) unwatchFile(file, onChange);
    this.start();
    for (const listener of changed) this.reload(listener);
  }

  private schedule(listenerName: string): void {
    clearTimeout(this.pending.get(listenerName));
    const timer = setTimeout(() => {
      this.pending.delete(listenerName);
      this.reload(listenerName);
    }, SETTLE_MS);
    timer.unref();
    this.pending.set(listenerName, timer);
  }

  private reload(listenerName: string): void {
    const listener = this.listeners.find((l) => l.name === listenerName);
    if (listener === undefined) return;
    try {
      const tls = listenerTls(this.values, listenerName, listener.securityProtocol === 'SASL_SSL');
      this.apply(listenerName, tls.options);
      this.logger.info('TLS certificates reloaded', { listener: listenerName });
    } catch (err) {
      this.logger.warn('TLS certificates not reloaded; the previous ones stay in use', {
        listener: listenerName,
        error: (err as Error).message,
      });
    }
  }
}

/** The ssl keys that apply to a listener (broker-wide and its own), as one comparable text. */
function sslSettingsOf(raw: ReadonlyMap<string, string>, listenerName: string): string {
  const prefix = `listener.name.${listenerName.toLowerCase()}.ssl.`;
  const keys = [...raw.keys()].filter((k) => k.startsWith('ssl.') || k.startsWith(prefix)).sort();
  return keys.map((k) => `${k}=${raw.get(k)}`).join('\n');
}
