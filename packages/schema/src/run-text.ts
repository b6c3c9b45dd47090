// A run's figures in words, the same in the CLI and the web.
import type { ClientLoad, FaultEvent, PartitionMove, RunSummary } from './run.js';

/** A load thread busy at least this fraction of the measured phase had no time to spare. */
export const CLIENT_BUSY_LIMIT = 0.9;
/** How many of a preferred-leaders fault's moves its line names; the rest are counted. */
const MOVES_SHOWN = 4;

/** The load threads (producer, consumer) at least CLIENT_BUSY_LIMIT busy, each as `producer thread 97% busy`. */
export function busyThreads(client: ClientLoad | undefined): string[] {
  if (!client) return [];
  return (
    [
      ['producer', client.producerBusy],
      ['consumer', client.consumerBusy],
    ] as const
  ).flatMap(([role, value]) =>
    value !== null && value >= CLIENT_BUSY_LIMIT ? [`${role} thread ${Math.round(value * 100)}% busy`] : [],
  );
}

/** The warning for a run whose busiest producer or consumer thread was near 100% busy, or null. */
export function clientPaceWarning(client: ClientLoad | undefined): string | null {
  const busy = busyThreads(client);
  if (busy.length === 0) return null;
  return `the client, not the target, set the pace (${busy.join(', ')}): these figures are the load generator's limit, not the target's (driver: native or more clients would load it harder)`;
}

/** An open-loop run whose producers reached less than this share of their rate says so (find-max's pass mark too). */
export const RATE_SHORTFALL_LIMIT = 0.95;

/** What rateShortfallWarning needs of a scenario. */
export interface PacedScenario {
  driver: string;
  producers: { count: number; rate: number | 'max' | 'find-max'; maxInFlight: number };
}

/**
 * An open-loop run (a fixed rate, or the rate find-max settled on) whose producers reached less than
 * 95% of it in the measured phase: the rate asked and the rate reached, in records/s; else null.
 */
export function rateShortfall(
  scenario: PacedScenario,
  summary: RunSummary,
): { asked: number; reached: number } | null {
  const p = scenario.producers;
  const asked =
    typeof p.rate === 'number' ? p.rate : p.rate === 'find-max' ? (summary.findMax?.rate ?? null) : null;
  if (asked === null || p.count === 0 || summary.measuredSeconds <= 0) return null;
  const reached = summary.produced.recordsPerSec;
  return reached >= asked * RATE_SHORTFALL_LIMIT ? null : { asked, reached };
}

const whole = (x: number) => Math.round(x).toLocaleString('en-US');

/** The short form of rateShortfall, for a table cell: `rate not reached: 184 of 1,000 rec/s`. */
export function rateShortfallText(scenario: PacedScenario, summary: RunSummary): string | null {
  const short = rateShortfall(scenario, summary);
  return short ? `rate not reached: ${whole(short.reached)} of ${whole(short.asked)} rec/s` : null;
}

/**
 * The warning for a run rateShortfall finds, or null: its figures describe a target or clients that
 * could not keep up, not the load asked for.
 */
export function rateShortfallWarning(scenario: PacedScenario, summary: RunSummary): string | null {
  const short = rateShortfall(scenario, summary);
  if (!short) return null;
  const share = Math.floor((short.reached / short.asked) * 100);
  const kafkajs =
    scenario.driver === 'kafkajs'
      ? ` Each kafkajs producer has at most producers.maxInFlight (${scenario.producers.maxInFlight}) sends in flight, each of about 5 ms of its records, so slow answers cap its rate: more producers, or driver: native, load harder.`
      : '';
  return `the producers reached ${whole(short.reached)} of the ${whole(short.asked)} records/s asked (${share}%): the target or the clients could not keep up. Latencies count from each record's intended send time, so they include the time records waited to be sent.${kafkajs}`;
}

/**
 * The machine over the measured phase, in a line, or null without the figures (off Linux, older runs):
 * `this machine: 88% of its 2 cores busy; the disk under the broker's data (vda) wrote 2,345 MB,
 * 2.05x the value bytes produced`. The disk counts every writer on it; under fsync none most of a
 * run's bytes may reach it only after the run.
 */
export function machineText(summary: RunSummary): string | null {
  const m = summary.machine;
  if (!m) return null;
  const others =
    m.othersCores === null || m.othersCores === undefined
      ? ''
      : ` (${m.othersCores.toFixed(2)} cores of it outside kbench)`;
  const cpu = `this machine: ${Math.round(m.cpuBusy * 100)}% of its ${m.cores} cores busy${others}`;
  if (m.disk === null || m.diskWrittenBytes === null)
    return `${cpu}; no disk figure (the broker's data is elsewhere, or on no single disk of this machine)`;
  const per = diskWritesPerProduced(summary);
  const ratio = per === null ? '' : `, ${per.toFixed(2)}x the value bytes produced`;
  return `${cpu}; the disk under the broker's data (${m.disk}) wrote ${whole(m.diskWrittenBytes / MIB)} MB${ratio}`;
}

const MIB = 1024 * 1024;

/** A run shared its machine when at least this many cores were busy outside kbench on average... */
export const OTHERS_CORES_LIMIT = 0.5;
/** ...and at least this share of the machine's cores. */
export const OTHERS_SHARE_LIMIT = 0.1;

/**
 * The warning for a run during whose measured phase something besides kbench kept the machine's
 * cores busy (another benchmark, a build, a broker left running), or null. A run that went on beside
 * other kbench runs (`concurrentWith`) has its own warning, which says as much: none here.
 */
export function machineShareWarning(summary: RunSummary, concurrentWith?: readonly string[]): string | null {
  if (concurrentWith && concurrentWith.length > 0) return null;
  const m = summary.machine;
  const others = m?.othersCores;
  if (!m || others === null || others === undefined) return null;
  if (others < OTHERS_CORES_LIMIT || others < OTHERS_SHARE_LIMIT * m.cores) return null;
  return `something besides this run kept ${others.toFixed(1)} of this machine's ${m.cores} cores busy on average while it was measured (processes kbench did not start, and the kernel's own threads): these figures are not those of a run alone`;
}

/** The bytes the data's disk wrote over the value bytes produced in the measured phase, or null. */
export function diskWritesPerProduced(summary: RunSummary): number | null {
  const written = summary.machine?.diskWrittenBytes ?? null;
  const produced = summary.produced.mbPerSec * MIB * summary.measuredSeconds;
  return written === null || produced <= 0 ? null : written / produced;
}

/** One executed fault: `pause node 2 for 500 ms`, `kill leader:t-0 (node 1)`, with why it failed. */
export function faultText(fault: FaultEvent): string {
  if (fault.command) return `command ${JSON.stringify(fault.command.run)}: ${commandEndText(fault)}`;
  if (fault.steps) {
    // A rolling restart: each node's restart and when it was back in every ISR.
    const steps = fault.steps.map((st) => {
      const back =
        st.inSyncT !== null
          ? `in sync after ${Math.round((st.inSyncT - st.t) * 10) / 10} s`
          : 'not back in sync';
      return `node ${st.node} ${back}`;
    });
    return `rolling-restart: ${steps.join(', ') || 'no node restarted'}${fault.error ? `; failed, ${fault.error}` : ''}`;
  }
  if (fault.action === 'preferred-leaders') {
    if (fault.error) return `preferred-leaders: failed, ${fault.error}`;
    const moved = `preferred-leaders: ${fault.moved ?? 0} partition${fault.moved === 1 ? '' : 's'} moved back`;
    return fault.moves && fault.moves.length > 0 ? `${moved}; ${movesText(fault.moves)}` : moved;
  }
  const target = typeof fault.target === 'number' ? `node ${fault.target}` : fault.target;
  const resolved = fault.node !== null && typeof fault.target !== 'number' ? ` (node ${fault.node})` : '';
  const length = fault.durationMs !== null ? ` for ${fault.durationMs} ms` : '';
  const failed = fault.error ? `: failed, ${fault.error}` : '';
  const waited =
    fault.waitedMs !== undefined
      ? ` (after ${fault.waitedMs < 1000 ? `${Math.round(fault.waitedMs)} ms` : `${Math.round(fault.waitedMs / 100) / 10} s`} waiting for the fault before it on the node to end)`
      : '';
  return `${fault.action} ${target}${resolved}${length}${waited}${failed}`;
}

/** The run's partitions a preferred-leaders fault moved: `t-0 from node 2 to node 1, t-1 from node 3 to node 2 and 4 more`. */
function movesText(moves: PartitionMove[]): string {
  const shown = moves.slice(0, MOVES_SHOWN).map((m) => {
    const from = m.from === null ? 'no leader' : `node ${m.from}`;
    return `${m.topic}-${m.partition} from ${from} to node ${m.to}`;
  });
  const more = moves.length > MOVES_SHOWN ? ` and ${moves.length - MOVES_SHOWN} more` : '';
  return `${shown.join(', ')}${more}`;
}

/** How a command fault's command ended: `exit 0 after 1.2 s`, `timed out, killed (SIGKILL) after 60 s`. */
export function commandEndText(fault: FaultEvent): string {
  const c = fault.command;
  if (!c) return '';
  const after = `after ${Math.round((c.endT - fault.t) * 10) / 10} s`;
  if (fault.error && c.exitCode === null && c.signal === null) return `failed, ${fault.error}`;
  const why = c.timedOut ? 'timed out, ' : c.killedAtRunEnd ? 'still running at the end of the run, ' : '';
  const end = c.exitCode !== null ? `exit ${c.exitCode}` : `killed (${c.signal})`;
  return `${why}${end} ${after}`;
}

/** A command fault's output, each stream labelled, with what was cut from its middle; '' when silent. */
export function commandOutputText(fault: FaultEvent): string {
  const c = fault.command;
  if (!c) return '';
  const parts: string[] = [];
  for (const [name, text, omitted] of [
    ['stdout', c.stdout, c.stdoutOmittedBytes],
    ['stderr', c.stderr, c.stderrOmittedBytes],
  ] as const) {
    if (text === '' && omitted === 0) continue;
    const cut = omitted > 0 ? ` (${omitted} bytes from the middle not kept)` : '';
    parts.push(`${name}${cut}:\n${text.replace(/\n$/, '')}`);
  }
  return parts.join('\n');
}

/**
 * What a fault cost, in one line (docs/scenarios.md#recovery-figures): `0.9 s without acks; back to 90% of
 * 2000 rec/s after 1.0 s; publish p99 994 ms, max 998 ms; 0 errors; no new leader (node 1 was back…)`.
 * Empty for a fault without recovery figures (a failed one, or a run stored before they were measured).
 */
export function recoveryText(fault: FaultEvent): string {
  const r = fault.recovery;
  if (!r) return '';
  const s = (v: number) => `${Math.round(v * 10) / 10} s`;
  const ms = (v: number) => `${v < 10 ? Math.round(v * 10) / 10 : Math.round(v)} ms`;
  const parts: string[] = [];
  if (r.noAckSec !== null) parts.push(`${s(r.noAckSec)} without acks`);
  parts.push(
    r.recoverySec !== null
      ? `back to 90% of ${r.levelPerSec} rec/s after ${s(r.recoverySec)}`
      : `throughput not back (${r.recoveryNote ?? 'no level before it'})`,
  );
  for (const [name, p99, max] of [
    ['publish', r.publishP99Ms, r.publishMaxMs],
    ['e2e', r.e2eP99Ms, r.e2eMaxMs],
  ] as const) {
    if (p99 !== null && max !== null) parts.push(`${name} p99 ${ms(p99)}, max ${ms(max)}`);
  }
  parts.push(`${r.errors} error${r.errors === 1 ? '' : 's'}`);
  if (r.retries !== null) parts.push(`${r.retries} record${r.retries === 1 ? '' : 's'} retried`);
  if (r.leaderElectionMs !== null) parts.push(`new leader after ${ms(r.leaderElectionMs)}`);
  else if (r.leaderNote && fault.action !== 'command') parts.push(`leader: ${r.leaderNote}`);
  return parts.join('; ');
}
