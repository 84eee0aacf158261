// Each topic's config overrides (as /config/topics/<t> holds them) and the settings they resolve to over the
// broker's config layers. Resolution is cached per topic and dropped when the topic's overrides or the broker's
// dynamic layers change.

import { type BrokerConfigLayers, mergeBrokerLayers } from './config/config-layers.js';
import { resolveTopicLogSettings, type TopicLogSettings } from './config/topic-log-settings.js';

const NO_OVERRIDES: ReadonlyMap<string, string> = new Map();

export class TopicConfigs {
  private readonly overrides = new Map<string, ReadonlyMap<string, string>>();
  private readonly settings = new Map<string, TopicLogSettings>();

  constructor(private layersValue: BrokerConfigLayers) {}

  get layers(): BrokerConfigLayers {
    return this.layersValue;
  }

  /** The merged broker config text, as the broker runs with it. */
  mergedBrokerConfig(): Map<string, string> {
    return mergeBrokerLayers(this.layersValue);
  }

  setLayers(layers: BrokerConfigLayers): void {
    this.layersValue = layers;
    this.settings.clear();
  }

  setOverrides(topic: string, overrides: ReadonlyMap<string, string>): void {
    this.overrides.set(topic, overrides);
    this.settings.delete(topic);
  }

  remove(topic: string): void {
    this.overrides.delete(topic);
    this.settings.delete(topic);
  }

  /** Whether the topic's overrides were set (read from the store) at least once. */
  hasOverrides(topic: string): boolean {
    return this.overrides.has(topic);
  }

  overridesFor(topic: string): ReadonlyMap<string, string> {
    return this.overrides.get(topic) ?? NO_OVERRIDES;
  }

  settingsFor(topic: string): TopicLogSettings {
    let s = this.settings.get(topic);
    if (s === undefined) {
      s = resolveTopicLogSettings(this.overridesFor(topic), this.layersValue);
      this.settings.set(topic, s);
    }
    return s;
  }
}
