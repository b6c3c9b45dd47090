// Plain-text tables and figures for the terminal.
import {
  type ClientLoad,
  clientPaceWarning,
  concurrentWarning,
  type FaultEvent,
  faultText,
  type LatencySummary,
  type RunListItem,
  type RunRecord,
  type RunSummary,
} from '@kbench/schema';

export function fmtNumber(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function fmtMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  if (ms >= 1000) return `${fmtNumber(ms / 1000, 2)} s`;
  if (ms >= 10) return `${fmtNumber(ms, 1)} ms`;
  return `${fmtNumber(ms, 2)} ms`;
}

export function table(rows: string[][], align: ('l' | 'r')[] = []): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) => (align[i] === 'r' ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function latencyRow(label: string, l: LatencySummary | null): string[] {
  if (!l) return [label, '-', '-', '-', '-', '-', '-', '-'];
  return [
    label,
    fmtMs(l.p50),
    fmtMs(l.p95),
    fmtMs(l.p99),
    fmtMs(l.p999),
    fmtMs(l.p9999),
    fmtMs(l.max),
    fmtMs(l.worst10Mean),
  ];
}

export function summaryText(summary: RunSummary | null): string {
  if (!summary) return 'No measured samples (the run ended during warm-up).';
  const throughput = table(
    [
      ['', 'records', 'rec/s', 'MB/s'],
      [
        'produced',
        fmtNumber(summary.produced.records),
        fmtNumber(summary.produced.recordsPerSec),
        fmtNumber(summary.produced.mbPerSec, 2),
      ],
      [
        'consumed',
        fmtNumber(summary.consumed.records),
        fmtNumber(summary.consumed.recordsPerSec),
        fmtNumber(summary.consumed.mbPerSec, 2),
      ],
    ],
    ['l', 'r', 'r', 'r'],
  );
  const latency = table(
    [
      ['latency', 'p50', 'p95', 'p99', 'p99.9', 'p99.99', 'max', 'worst 10%'],
      latencyRow('publish', summary.publishLatencyMs),
      latencyRow('end-to-end', summary.endToEndLatencyMs),
    ],
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
  const errors =
    summary.produced.errors > 0 ? `\nproduce errors: ${fmtNumber(summary.produced.errors)} records` : '';
  const pace = clientPaceWarning(summary.client);
  const client = summary.client ? `\n${clientText(summary.client)}${pace ? `\nwarning: ${pace}` : ''}` : '';
  const wire =
    summary.produced.wireMbPerSec === null
      ? ''
      : `\nbytes on the wire: ${fmtNumber(summary.produced.wireMbPerSec, 2)} MB/s produced (record batches as sent)`;
  const search = summary.findMax
    ? `\nfind-max: ${summary.findMax.rate === null ? 'no rate passed' : `${fmtNumber(summary.findMax.rate)} rec/s`} after ${summary.findMax.trials.length} trials; the measured phase ran at it`
    : '';
  return `measured ${fmtNumber(summary.measuredSeconds, 1)} s (warm-up excluded; MB = 1,048,576 bytes of values)\n\n${throughput}\n\n${latency}${errors}${wire}${client}${search}`;
}

function clientText(c: ClientLoad): string {
  const busy = (label: string, v: number | null) =>
    v === null ? '' : `, ${label} thread ${Math.round(v * 100)}% busy`;
  const whose = c.includesBroker ? 'kbench process incl. the bundled broker' : 'kbench process';
  return `load generator: ${fmtNumber(c.cpuCores, 2)} cores (${whose})${busy('producer', c.producerBusy)}${busy('consumer', c.consumerBusy)}`;
}

/** The faults a run executed, one line each at its time since load began; empty without any. */
export function faultsText(faults: FaultEvent[] | undefined): string {
  if (!faults || faults.length === 0) return '';
  return `\nfaults executed:\n${faults.map((f) => `  ${fmtNumber(f.t, 1)} s  ${faultText(f)}`).join('\n')}`;
}

export function runHeader(run: RunRecord): string {
  const env = run.environment;
  return [
    `run ${run.id}  ${run.status}${run.error ? `: ${run.error}` : ''}`,
    `scenario   ${run.scenario.name}${run.source ? ` (${run.source})` : ''}`,
    `target     ${env.target}${env.bootstrap ? ` ${env.bootstrap}` : ''}, driver ${env.driver}`,
    `started    ${run.startedAt}${run.finishedAt ? `, finished ${run.finishedAt}` : ''}`,
    `machine    ${env.cores} cores, ${fmtNumber(env.memoryBytes / 1024 ** 3, 1)} GiB, ${env.os}, node ${env.versions.node ?? '?'}`,
    ...(env.memoryNote ? [`memory     ${env.memoryNote}`] : []),
    ...(run.concurrentWith ? [`warning    ${concurrentWarning(run.concurrentWith)}`] : []),
  ].join('\n');
}

/** Marks, in `kbench list`, a run that shared the machine with another. */
const CONCURRENT_MARK = '*';

export function runListText(runs: RunListItem[]): string {
  if (runs.length === 0) return 'No runs yet. Start one with: kbench run scenarios/quickstart.yaml';
  const list = table(
    [
      ['id', 'started', 'status', 'scenario', 'target', 'rec/s', 'MB/s', 'publish p99'],
      ...runs.map((r) => [
        r.id,
        r.startedAt.replace('T', ' ').slice(0, 19),
        r.concurrentWith ? `${r.status}${CONCURRENT_MARK}` : r.status,
        r.name,
        r.target,
        r.summary ? fmtNumber(r.summary.produced.recordsPerSec) : '-',
        r.summary ? fmtNumber(r.summary.produced.mbPerSec, 2) : '-',
        fmtMs(r.summary?.publishLatencyMs?.p99),
      ]),
    ],
    ['l', 'l', 'l', 'l', 'l', 'r', 'r', 'r'],
  );
  return runs.some((r) => r.concurrentWith)
    ? `${list}\n\n${CONCURRENT_MARK} ran at the same time as another run on this machine, so its figures are not those of a run alone (kbench show <id> names the other)`
    : list;
}
