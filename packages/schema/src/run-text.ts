// A run's figures in words, the same in the CLI and the web.
import type { ClientLoad, FaultEvent } from './run.js';

/** A load thread busy at least this fraction of the measured phase had no time to spare. */
export const CLIENT_BUSY_LIMIT = 0.9;

/** The warning for a run whose busiest producer or consumer thread was near 100% busy, or null. */
export function clientPaceWarning(client: ClientLoad | undefined): string | null {
  if (!client) return null;
  const busy: [string, number][] = [];
  for (const [role, value] of [
    ['producer', client.producerBusy],
    ['consumer', client.consumerBusy],
  ] as const) {
    if (value !== null && value >= CLIENT_BUSY_LIMIT) busy.push([role, value]);
  }
  if (busy.length === 0) return null;
  const threads = busy.map(([role, value]) => `${role} thread ${Math.round(value * 100)}% busy`).join(', ');
  return `the client, not the target, set the pace (${threads}): these figures are the load generator's limit, not the target's (driver: native or more clients would load it harder)`;
}

/** One executed fault: `pause node 2 for 500 ms`, `kill leader:t-0 (node 1)`, with why it failed. */
export function faultText(fault: FaultEvent): string {
  const target = typeof fault.target === 'number' ? `node ${fault.target}` : fault.target;
  const resolved = fault.node !== null && typeof fault.target !== 'number' ? ` (node ${fault.node})` : '';
  const length = fault.durationMs !== null ? ` for ${fault.durationMs} ms` : '';
  const failed = fault.error ? `: failed, ${fault.error}` : '';
  return `${fault.action} ${target}${resolved}${length}${failed}`;
}
