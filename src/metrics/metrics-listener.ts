// The address of the metrics endpoint, from `brook.metrics.listener`: `http://host:port`. Only plain HTTP on an
// explicit host and port: the endpoint is meant for a Prometheus server on a trusted network, as the JMX
// exporter's HTTP port is for Kafka. Port 0 lets the system choose (tests).

export interface MetricsListener {
  readonly host: string;
  readonly port: number;
}

export type ParsedMetricsListener =
  | { readonly ok: true; readonly value: MetricsListener }
  | { readonly ok: false; readonly reason: string };

export function parseMetricsListener(text: string): ParsedMetricsListener {
  const fail = (reason: string): ParsedMetricsListener => ({ ok: false, reason });
  const match = /^http:\/\/(\[[0-9a-fA-F:.]+\]|[^/:[\]\s]+):(\d{1,5})\/?$/.exec(text.trim());
  if (match === null) return fail('expected http://host:port (for example http://127.0.0.1:9404)');
  const port = Number(match[2]);
  if (port > 65535) return fail(`port ${port} is out of range`);
  // Brackets only mark an IPv6 address in a URL; the socket takes the bare address.
  const host = match[1]!.startsWith('[') ? match[1]!.slice(1, -1) : match[1]!;
  return { ok: true, value: { host, port } };
}
