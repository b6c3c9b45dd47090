// Which processes' CPU is a run's own, to tell it from the rest of the machine's (summary.machine's
// othersCores): kbench's process and those it started, and a broker of the target that runs on
// this machine though kbench did not start it (`kbench broker` in another terminal, a local Kafka).
import { lookup } from 'node:dns/promises';
import os from 'node:os';
import type { Environment } from '@kbench/schema';
import { listenerPids } from './host.js';

/**
 * The roots of the run's own process trees, or null when they cannot be told: load agents (some
 * may run here, as processes kbench did not start), or a broker here whose process cannot be read.
 */
export async function ownProcesses(environment: Environment, agents: boolean): Promise<number[] | null> {
  if (agents) return null;
  if (environment.target !== 'external') return [process.pid];
  const endpoints = [
    ...environment.bootstrap.split(',').map(endpoint),
    ...(environment.cluster?.brokers ?? []).map((b) => ({ host: b.host, port: b.port })),
  ].filter((e): e is { host: string; port: number } => e !== null);
  const local = new Set<number>();
  const mine = localAddresses();
  for (const e of endpoints) {
    const addresses = await lookup(e.host, { all: true }).catch(() => []);
    if (addresses.some((a) => mine.has(a.address) || a.address.startsWith('127.') || a.address === '::1'))
      local.add(e.port);
  }
  if (local.size === 0) return [process.pid];
  const pids = listenerPids([...local]);
  return pids === null ? null : [...new Set([process.pid, ...pids])];
}

/** `host:port` (an IPv6 host in brackets) as its parts, or null. */
function endpoint(text: string): { host: string; port: number } | null {
  const match = /^\[?([^\]]*?)\]?:(\d+)$/.exec(text.trim());
  return match ? { host: match[1] as string, port: Number(match[2]) } : null;
}

function localAddresses(): Set<string> {
  return new Set(
    Object.values(os.networkInterfaces())
      .flat()
      .map((i) => i?.address)
      .filter((a): a is string => a !== undefined),
  );
}
