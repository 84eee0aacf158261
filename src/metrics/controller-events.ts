// The controller's event metrics, as Kafka's ControllerEventManager and ControllerStats export them through the
// JMX exporter: the queue's size (EventQueueSize), the time events wait in it (EventQueueTimeMs), and the rate and
// time of each kind of event under the name of Kafka's ControllerState for it (BrokerChange is
// LeaderElectionRateAndTimeMs, IsrChange is IsrChangeRateAndTimeMs, ...), plus unclean leader elections. Kafka's
// timers become Prometheus histograms in ms (`_bucket`, `_sum`, `_count`), as the request metrics are.
//
// Every broker runs the queue (elections, resyncs), so every broker reports; the states' work happens on the
// active controller. Brook's events with no Kafka state (fencing, resyncs, self-healing, ...) count only in
// brook_controller_events_total by kind. Controller events are rare (a few per second at most), so they are
// observed through prom-client directly.

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Controller } from '../controller/controller.js';
import { REQUEST_TIME_BUCKETS_MS } from './request-metrics.js';

/** Brook's event kinds (an event's name up to its first space) with Kafka's RateAndTimeMs metric name. */
const KAFKA_STATE_METRIC: Readonly<Record<string, string>> = {
  controllerChange: 'controllerchange',
  elect: 'controllerchange',
  brokerChange: 'leaderelection',
  topicChange: 'topicchange',
  topicDeletion: 'topicdeletion',
  stopReplicaAnswer: 'topicdeletion',
  alterPartitionReassignments: 'partitionreassignment',
  zkPartitionReassignment: 'partitionreassignment',
  checkLeaderBalance: 'autoleaderbalance',
  uncleanLeaderElectionEnable: 'uncleanleaderelectionenable',
  electLeaders: 'manualleaderbalance',
  zkPreferredElection: 'manualleaderbalance',
  controlledShutdown: 'controlledshutdown',
  alterPartition: 'isrchange',
  logDirEvents: 'logdirchange',
  offlineReplicas: 'logdirchange',
  stop: 'controllershutdown',
  listPartitionReassignments: 'listpartitionreassignment',
};

/** Events of kinds beyond this many are counted as "other": a bug naming events by data cannot grow the labels. */
const EVENT_KINDS_MAX = 64;

export class ControllerEventMetrics {
  private controller: Controller | null = null;
  private readonly queueTime: Histogram;
  private readonly stateTimes = new Map<string, Histogram>();
  private readonly counts = new Map<string, number>();

  constructor(registry: Registry) {
    const metrics = this;
    this.queueTime = new Histogram({
      name: 'kafka_controller_controllereventmanager_eventqueuetimems',
      help: 'EventQueueTimeMs: time a controller event waited in the queue before it ran',
      buckets: [...REQUEST_TIME_BUCKETS_MS],
      registers: [registry],
    });
    registry.registerMetric(
      new Gauge({
        name: 'kafka_controller_controllereventmanager_eventqueuesize',
        help: 'EventQueueSize: controller events waiting or running',
        registers: [],
        collect() {
          this.set(metrics.controller?.eventQueueSize ?? 0);
        },
      }),
    );
    for (const name of new Set(Object.values(KAFKA_STATE_METRIC))) {
      this.stateTimes.set(
        name,
        new Histogram({
          name: `kafka_controller_controllerstats_${name}rateandtimems`,
          help: `ControllerStats ${name}RateAndTimeMs: time the controller spent on these events`,
          buckets: [...REQUEST_TIME_BUCKETS_MS],
          registers: [registry],
        }),
      );
    }
    registry.registerMetric(
      new Counter({
        name: 'kafka_controller_controllerstats_uncleanleaderelections_total',
        help: 'UncleanLeaderElectionsPerSec: leaders elected from outside the ISR by this broker as controller',
        registers: [],
        collect() {
          this.reset();
          this.inc(metrics.controller?.uncleanLeaderElections ?? 0);
        },
      }),
    );
    registry.registerMetric(
      new Counter({
        name: 'brook_controller_events_total',
        help: "Controller events run, by kind (the event's name without its arguments)",
        labelNames: ['event'],
        registers: [],
        collect() {
          this.reset();
          for (const [event, n] of metrics.counts) this.inc({ event }, n);
        },
      }),
    );
  }

  /** Starts observing `controller`'s event queue. */
  attach(controller: Controller): void {
    this.controller = controller;
    controller.observeEvents((name, queueMs, runMs) => this.observe(name, queueMs, runMs));
  }

  private observe(name: string, queueMs: number, runMs: number): void {
    const space = name.indexOf(' ');
    let kind = space < 0 ? name : name.slice(0, space);
    if (!this.counts.has(kind) && this.counts.size >= EVENT_KINDS_MAX) kind = 'other';
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    this.queueTime.observe(queueMs);
    const state = KAFKA_STATE_METRIC[kind];
    if (state !== undefined) this.stateTimes.get(state)!.observe(runMs);
  }
}
