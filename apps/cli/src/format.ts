// Plain-text tables and figures for the terminal.
import {
  type AgentsRun,
  agentLossWarning,
  type ClientLoad,
  clientPaceWarning,
  commandOutputText,
  concurrentWarning,
  type FaultEvent,
  faultText,
  type LatencySummary,
  listedThroughput,
  machineShareWarning,
  machineText,
  type RunListItem,
  type RunRecord,
  type RunSummary,
  rateShortfallWarning,
  recoveryText,
  type Scenario,
  type Verification,
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

/** Text cut into lines of at most `width` characters, at spaces where it can be. */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  let rest = text;
  while (rest.length > width) {
    const space = rest.lastIndexOf(' ', width);
    const cut = space > 0 ? space : width;
    lines.push(rest.slice(0, cut));
    rest = rest.slice(cut).trimStart();
  }
  lines.push(rest);
  return lines;
}

/**
 * A table no wider than `width` columns for a terminal: cells after the first wrap at `cellWidth`, and
 * columns that do not fit go on in further blocks below, each repeating the first column.
 */
export function fitTable(rows: string[][], align: ('l' | 'r')[] = [], width = 120, cellWidth = 30): string {
  const lines = rows.flatMap((row) => {
    const cells = row.map((cell, i) => (i === 0 ? [cell] : wrapText(cell, cellWidth)));
    const height = Math.max(...cells.map((c) => c.length));
    return Array.from({ length: height }, (_, line) => cells.map((c) => c[line] ?? ''));
  });
  const widths = (lines[0] ?? []).map((_, i) => Math.max(...lines.map((line) => (line[i] ?? '').length)));
  const first = widths[0] ?? 0;
  const blocks: number[][] = [[]];
  let used = first;
  for (let i = 1; i < widths.length; i++) {
    const block = blocks.at(-1) as number[];
    const needed = 2 + (widths[i] ?? 0);
    if (block.length > 0 && used + needed > width) {
      blocks.push([i]);
      used = first + needed;
    } else {
      block.push(i);
      used += needed;
    }
  }
  return blocks
    .map((columns) => {
      const picked = lines
        .map((line) => [line[0] ?? '', ...columns.map((i) => line[i] ?? '')])
        .filter((line) => line.some((cell) => cell !== ''));
      return table(picked, [align[0] ?? 'l', ...columns.map((i) => align[i] ?? 'l')]);
    })
    .join('\n\n');
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

export function summaryText(
  summary: RunSummary | null,
  scenario?: Scenario,
  concurrentWith?: readonly string[],
): string {
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
  const errors = clientErrorsText(summary);
  const shortfall = scenario ? rateShortfallWarning(scenario, summary) : null;
  const pace = clientPaceWarning(summary.client);
  const client = summary.client ? `\n${clientText(summary.client)}${pace ? `\nwarning: ${pace}` : ''}` : '';
  const shared = machineShareWarning(summary, concurrentWith);
  const machine = [machineText(summary), shared && `warning: ${shared}`].filter(Boolean).join('\n');
  const wire =
    summary.produced.wireMbPerSec === null
      ? ''
      : `\nbytes on the wire: ${fmtNumber(summary.produced.wireMbPerSec, 2)} MB/s produced (record batches as sent)`;
  const search = summary.findMax
    ? `\nfind-max: ${summary.findMax.rate === null ? 'no rate passed' : `${fmtNumber(summary.findMax.rate)} rec/s`} after ${summary.findMax.trials.length} trials; the measured phase ran at it`
    : '';
  return `measured ${fmtNumber(summary.measuredSeconds, 1)} s (warm-up excluded; MB = 1,048,576 bytes of values)\n\n${throughput}${shortfall ? `\nwarning: ${shortfall}` : ''}\n\n${latency}${errors}${wire}${client}${machine ? `\n${machine}` : ''}${search}${verificationText(summary.verification)}`;
}

/**
 * The measured phase's client errors: the count (records whose send failed on kafkajs, failed
 * requests and answers on the native engine), then what they said, most frequent first.
 */
export function clientErrorsText(summary: RunSummary): string {
  if (summary.produced.errors === 0) return '';
  const rows = (summary.clientErrors ?? []).map((e) => [`  ${e.role}`, fmtNumber(e.count), e.message]);
  const said = rows.length > 0 ? `\n${table(rows, ['l', 'r', 'l'])}` : '';
  return `\nclient errors: ${fmtNumber(summary.produced.errors)}${said}`;
}

/** The record check (issue 19): its verdict in a line, and the partitions with misses; empty without a check. */
export function verificationText(v: Verification | undefined): string {
  if (!v) return '';
  const head =
    v.verdict === 'failed'
      ? `\n\n!!! RECORD CHECK FAILED: ${v.statement.replace(/^FAILED: /, '')}`
      : `\n\nrecord check: ${v.statement}`;
  const missed = v.partitions.filter((p) => p.lost + p.duplicated + p.reordered > 0);
  if (missed.length === 0) return head;
  const rows = missed
    .slice(0, 20)
    .map((p) => [
      `${p.topic}:${p.partition}`,
      fmtNumber(p.acknowledged),
      fmtNumber(p.lost),
      fmtNumber(p.duplicated),
      fmtNumber(p.reordered),
      fmtNumber(p.unacknowledgedPresent),
    ]);
  const more = missed.length > 20 ? `\n(${missed.length - 20} more partitions with misses: see --json)` : '';
  const t = table(
    [['partition', 'acknowledged', 'lost', 'duplicated', 'reordered', 'unacked present'], ...rows],
    ['l', 'r', 'r', 'r', 'r', 'r'],
  );
  return `${head}\n${t}${more}`;
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
  const line = (f: FaultEvent) => {
    const raw = commandOutputText(f);
    const output = raw ? raw.replace(/^/gm, '        ') : '';
    const recovery = recoveryText(f);
    return `  ${fmtNumber(f.t, 1)} s  ${faultText(f)}${recovery ? `\n        recovery: ${recovery}` : ''}${output ? `\n${output}` : ''}`;
  };
  return `\nfaults executed:\n${faults.map(line).join('\n')}`;
}

/** The run's load agents, one row each (what it ran, its clock, what it did), with any loss; empty without agents. */
export function agentsText(agents: AgentsRun | undefined): string {
  if (!agents || agents.agents.length === 0) return '';
  // Two decimals, and no "-0.00" for an offset that rounds to nothing.
  const ms2 = (ms: number) => fmtNumber(Math.abs(ms) < 0.005 ? 0 : ms, 2);
  const rows = [
    [
      'agent',
      'address',
      'host',
      'clients',
      'clock offset',
      'produced',
      'publish p99',
      'consumed',
      'e2e p99',
      'lost',
    ],
    ...agents.agents.map((a) => [
      a.name,
      a.address,
      a.host,
      `${a.producers} p, ${a.consumers} c`,
      `${ms2(a.clockOffsetMs)} ± ${ms2(a.clockUncertaintyMs)} ms`,
      `${fmtNumber(a.produced.recordsPerSec)} rec/s`,
      fmtMs(a.produced.latencyMs?.p99),
      `${fmtNumber(a.consumed.recordsPerSec)} rec/s`,
      fmtMs(a.consumed.latencyMs?.p99),
      a.lostAtMs === null ? '-' : `at ${fmtNumber(a.lostAtMs / 1000, 1)} s: ${a.lostReason ?? ''}`,
    ]),
  ];
  const lost = agentLossWarning(agents);
  const head = `load agents (clients: producers p, consumers c; end-to-end latency right to within ${ms2(agents.e2eClockUncertaintyMs)} ms of clock uncertainty; on loss: ${agents.onLoss}):`;
  return `\n\n${head}\n${fitTable(rows, ['l', 'l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'l'])}${lost ? `\nwarning: ${lost}` : ''}`;
}

/** Kafka client properties as `name=value` pairs, or '-' for none. */
export function propertiesText(props: Record<string, string> | undefined): string {
  const pairs = Object.entries(props ?? {}).map(([k, v]) => `${k}=${v}`);
  return pairs.length > 0 ? pairs.join(' ') : '-';
}

/** The Kafka properties the run's clients ran with, as their driver applied them; one line a role. */
function propertyLines(props: RunRecord['environment']['clientProperties']): string[] {
  return (['producers', 'consumers'] as const)
    .filter((role) => Object.keys(props?.[role] ?? {}).length > 0)
    .map((role) => `${role.padEnd(10)} ${propertiesText(props?.[role])}`);
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
    ...propertyLines(env.clientProperties),
    // The profile's metrics endpoints: what each answered (docs/targets.md).
    ...(env.metrics ?? []).map(
      (m) =>
        `metrics    ${m.name} ${m.url} (${m.kind ?? 'kind unknown'}): ${m.scrapes} scrapes, ${m.failed} failed${m.lastError ? ` (last: ${m.lastError})` : ''}`,
    ),
    ...(run.concurrentWith ? [`warning    ${concurrentWarning(run.concurrentWith)}`] : []),
  ].join('\n');
}

/** Marks, in `kbench list`, a run that shared the machine with another. */
const CONCURRENT_MARK = '*';
/** Marks, in `kbench list`, figures a run consumed: it had no producers (it read a preloaded backlog). */
const CONSUMED_MARK = 'c';

export function runListText(runs: RunListItem[]): string {
  if (runs.length === 0) return 'No runs yet. Start one with: kbench run scenarios/quickstart.yaml';
  const throughputs = runs.map((r) => (r.summary ? listedThroughput(r.summary) : null));
  const anyConsumed = throughputs.some((t) => t?.side === 'consumed');
  // Produced figures keep their digits in line with marked ones.
  const mark = (side: 'produced' | 'consumed') =>
    side === 'consumed' ? ` ${CONSUMED_MARK}` : anyConsumed ? '  ' : '';
  const list = table(
    [
      ['id', 'started', 'status', 'scenario', 'target', 'rec/s', 'MB/s', 'publish p99'],
      ...runs.map((r, i) => {
        const t = throughputs[i];
        return [
          r.id,
          r.startedAt.replace('T', ' ').slice(0, 19),
          r.concurrentWith ? `${r.status}${CONCURRENT_MARK}` : r.status,
          r.name,
          r.target,
          t ? `${fmtNumber(t.recordsPerSec)}${mark(t.side)}` : '-',
          t ? `${fmtNumber(t.mbPerSec, 2)}${mark(t.side)}` : '-',
          fmtMs(r.summary?.publishLatencyMs?.p99),
        ];
      }),
    ],
    ['l', 'l', 'l', 'l', 'l', 'r', 'r', 'r'],
  );
  const notes = [
    ...(runs.some((r) => r.concurrentWith)
      ? [
          `${CONCURRENT_MARK} ran at the same time as another run on this machine, so its figures are not those of a run alone (kbench show <id> names the other)`,
        ]
      : []),
    ...(anyConsumed
      ? [`${CONSUMED_MARK} consumed: the run had no producers, so its rate is what its consumers read`]
      : []),
  ];
  return notes.length > 0 ? `${list}\n\n${notes.join('\n')}` : list;
}
