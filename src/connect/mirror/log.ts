// Connectors get no logger from the Connect API; the Mirror connectors write their lines to stderr, prefixed
// with the flow, as the worker's own log lines are.

export function mirrorLog(flow: string, line: string): void {
  process.stderr.write(`[${new Date().toISOString()}] [${flow}] ${line}\n`);
}
