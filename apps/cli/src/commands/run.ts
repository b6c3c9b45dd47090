import path from 'node:path';
import {
  loadScenarioFile,
  newSeriesId,
  repeatSeries,
  runSeries,
  type ScenarioOverrides,
  ScenarioReadError,
  type SeriesItem,
  sweepSeries,
} from '@kbench/app';
import {
  agentShares,
  assertSupported,
  type LiveRun,
  planRun,
  type RunPlan,
  readTokenFile,
} from '@kbench/engine';
import { History, type SlotHold } from '@kbench/history';
import {
  type AgentEndpoint,
  concurrentWarning,
  parseAgentsList,
  parseScenario,
  type RunRecord,
  type Scenario,
} from '@kbench/schema';
import { intOption, parseCommandArgs } from '../args.js';
import {
  agentsText,
  faultsText,
  fmtNumber,
  propertiesText,
  runHeader,
  summaryText,
  table,
} from '../format.js';
import { ProgressLine } from '../progress.js';
import { figureStatistics, groupRuns, measuredRun, statisticsText } from '../repeats.js';
import { withRunSlot } from '../run-slot.js';
import { resolveScenarioFile } from '../scenario-file.js';
import { UsageError } from '../usage.js';
import { comparisonText } from './compare.js';
import {
  evaluateGate,
  GATE_FLAGS,
  type GateResult,
  type GateSettings,
  gateMetrics,
  gateSettings,
  type RunSet,
  reportGate,
  resolveRunSet,
} from './gate.js';

/** Reads a scenario file (a path or a library name) with --set, --target, --keep-topics and --quick, validated. */
export async function loadScenario(file: string, overrides: ScenarioOverrides): Promise<Scenario> {
  try {
    return await loadScenarioFile(resolveScenarioFile(file), overrides);
  } catch (err) {
    if (err instanceof ScenarioReadError) throw new UsageError(err.message);
    throw err;
  }
}

/** `kbench sweep`: `run` for a scenario that must have a sweep (a series of runs). */
export function sweepCommand(argv: string[]): Promise<number> {
  return runCommand(argv, 'sweep');
}

export async function runCommand(argv: string[], command: 'run' | 'sweep' = 'run'): Promise<number> {
  const { values, positionals } = parseCommandArgs(command, argv, {
    set: { type: 'string', multiple: true },
    target: { type: 'string', multiple: true },
    json: { type: 'boolean' },
    quick: { type: 'boolean' },
    'keep-topics': { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    'max-rate': { type: 'string' },
    concurrent: { type: 'boolean' },
    agents: { type: 'string' },
    'agent-token-file': { type: 'string' },
    repeat: { type: 'string' },
    ...GATE_FLAGS,
  });
  if (positionals.length !== 1) {
    throw new UsageError(
      `kbench ${command}: give exactly one scenario (a file or a library name), e.g. kbench ${command} scenarios/quickstart.yaml or kbench ${command} quickstart`,
    );
  }
  // A path, or a library name such as quickstart: the history records the file it resolved to.
  const file = resolveScenarioFile(positionals[0] as string);
  const json = Boolean(values.json);
  const maxRate = maxRateOption(command, values['max-rate']);
  const targets = values.target ?? [];
  if (new Set(targets).size !== targets.length) {
    throw new UsageError(`kbench ${command}: each --target once (got ${targets.join(', ')})`);
  }
  const load = (target?: string) =>
    loadScenario(file, {
      ...(values.set ? { set: values.set } : {}),
      quick: Boolean(values.quick),
      keepTopics: Boolean(values['keep-topics']),
      ...(target !== undefined ? { target } : {}),
    });
  const source = path.relative(process.cwd(), path.resolve(file));
  const options = {
    ...(maxRate === undefined ? {} : { maxRate }),
    ...agentOptions(command, values.agents, values['agent-token-file']),
  };
  const concurrent = Boolean(values.concurrent);
  const repeat = intOption(command, 'repeat', values.repeat, 1, 100) ?? 1;
  const gate = gateSettings(command, values);
  if (gate && targets.length > 1)
    throw new UsageError(
      `kbench ${command}: --baseline judges one configuration; give at most one --target (got ${targets.join(', ')})`,
    );

  if (targets.length > 1) {
    // Compare targets: the one scenario on each target in turn, then side by side.
    const scenarios = await Promise.all(targets.map((t) => load(t)));
    if (scenarios[0]?.sweep) {
      throw new UsageError(
        `kbench ${command}: several --target run one scenario on each target; ${file} has a sweep (run it per target instead)`,
      );
    }
    // Every target is checked before the first run starts, so a typo does not waste a run.
    for (const scenario of scenarios) assertSupported(scenario, options);
    if (values['dry-run']) return dryRun(scenarios, json, maxRate, options.agents);
    const results = await withRunSlot(
      { command: `kbench ${command}`, name: scenarios[0]?.name ?? file },
      concurrent,
      (slot) => {
        const series = newSeriesId('targets');
        // With --repeat, A B A B ...: a drift of the machine hits every target alike.
        return runPlans(
          repeatSeries(
            scenarios.map((scenario) => ({ scenario, source, series })),
            repeat,
          ),
          json,
          { ...options, slot },
        );
      },
    );
    if (repeat > 1) return reportRepeats(results, json, null);
    if (!json && results.length > 1) process.stdout.write(`\n${targetComparisonText(results)}\n`);
    return report(results, json);
  }

  const scenario = await load(targets[0]);
  if (command === 'sweep' && !scenario.sweep) {
    throw new UsageError(`kbench sweep: ${file} has no sweep; add sweep: { knob, values } or use kbench run`);
  }
  if (gate && scenario.sweep)
    throw new UsageError(
      `kbench ${command}: --baseline judges one configuration; ${file} has a sweep (gate one of its points with --set)`,
    );
  // The baseline and the figures are checked before any load is sent.
  const baseline = gate ? await checkedBaseline(command, gate, scenario.name) : null;
  const points = sweepSeries(scenario, source);
  // A dry run shows each configuration once, however many times --repeat would run it.
  if (values['dry-run'])
    return dryRun(
      points.map((i) => i.scenario),
      json,
      maxRate,
      options.agents,
    );
  // A sweep ends at a run that does not complete: the points after it would measure a broken setup.
  const items = repeatSeries(points, repeat);
  const results = await withRunSlot(
    { command: `kbench ${command}`, name: scenario.name },
    concurrent,
    (slot) => runPlans(items, json, { ...options, slot, endOnFailure: scenario.sweep !== undefined }),
  );
  if (repeat > 1 || baseline) return reportRepeats(results, json, baseline);
  return report(results, json, items.length > 1);
}

/** The baseline --baseline names, of this scenario, with the figures to judge; usage errors otherwise. */
async function checkedBaseline(
  command: string,
  settings: GateSettings,
  scenario: string,
): Promise<{ settings: GateSettings; set: RunSet; metrics: string[] }> {
  const history = await History.open();
  const set = await resolveRunSet(history, settings.baseline, command, '--baseline');
  return { settings, set, metrics: gateMetrics(command, settings, set, scenario) };
}

/**
 * After repeats (or a run with --baseline): each configuration's statistics, then the gate's verdict;
 * with --json one object { series, runs, groups, gate }. Exit 1 if a run failed, else the gate's code.
 */
async function reportRepeats(
  results: RunRecord[],
  json: boolean,
  baseline: { settings: GateSettings; set: RunSet; metrics: string[] } | null,
): Promise<number> {
  const runs = results.map(measuredRun);
  const groups = groupRuns(runs).map((g) => ({
    name: g.runs[0]?.name ?? '',
    target: g.runs[0]?.target ?? '',
    ...(g.runs[0]?.sweepValue === undefined ? {} : { sweepValue: g.runs[0].sweepValue }),
    runs: g.runs.map((r) => r.id),
    statistics: figureStatistics(g.runs),
  }));
  if (!json && results.length > 1)
    for (const g of groups)
      process.stdout.write(
        `\n${statisticsText(`${g.name} on ${g.target}: ${g.runs.length} runs`, g.statistics)}\n`,
      );
  let gate: GateResult | null = null;
  let code = results.some((r) => r.status === 'failed') ? 1 : 0;
  if (baseline) {
    const first = runs[0];
    gate = evaluateGate(
      baseline.set.name,
      baseline.set,
      { ref: results[0]?.series ?? first?.id ?? '', target: first?.target ?? '', runs },
      baseline.metrics,
      baseline.settings.maxRegression,
    );
    const gateCode = await reportGate(gate, baseline.settings, json);
    if (code === 0) code = gateCode;
  }
  if (json)
    process.stdout.write(
      `${JSON.stringify({ series: results[0]?.series ?? null, runs: results, groups, ...(gate ? { gate } : {}) }, null, 2)}\n`,
    );
  return code;
}

/** --agents and its token (--agent-token-file, or KBENCH_AGENT_TOKEN), checked; {} without --agents. */
function agentOptions(
  command: string,
  list: string | undefined,
  tokenFile: string | undefined,
): { agents?: AgentEndpoint[]; agentToken?: string } {
  if (list === undefined) {
    if (tokenFile !== undefined)
      throw new UsageError(`kbench ${command}: --agent-token-file goes with --agents host:port,...`);
    return {};
  }
  let agents: AgentEndpoint[];
  try {
    agents = parseAgentsList(list);
  } catch (err) {
    throw new UsageError(`kbench ${command}: --agents: ${(err as Error).message}`);
  }
  let token: string | undefined;
  if (tokenFile !== undefined) {
    try {
      token = readTokenFile(tokenFile, '--agent-token-file');
    } catch (err) {
      throw new UsageError(`kbench ${command}: ${(err as Error).message}`);
    }
  } else if (process.env.KBENCH_AGENT_TOKEN) token = process.env.KBENCH_AGENT_TOKEN;
  return { agents, ...(token === undefined ? {} : { agentToken: token }) };
}

function maxRateOption(command: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) {
    throw new UsageError(
      `kbench ${command}: --max-rate must be a number of records per second above 0 (got ${JSON.stringify(value)})`,
    );
  }
  return n;
}

/** The comparison of one scenario's runs on several targets, with each target's throughput against the first. */
export function targetComparisonText(runs: RunRecord[]): string {
  const lines = [comparisonText(runs)];
  const base = runs[0];
  const baseRate = base?.summary?.produced.recordsPerSec ?? 0;
  if (base && baseRate > 0) {
    lines.push('\nproduced rec/s against the first target:');
    for (const run of runs.slice(1)) {
      const rate = run.summary?.produced.recordsPerSec;
      lines.push(
        `  ${run.scenario.target} (${run.id}) / ${base.scenario.target} (${base.id}): ${rate ? `${fmtNumber(rate / baseRate, 2)}x` : '-'}`,
      );
    }
  }
  lines.push(
    `\nkbench compare ${runs.map((r) => r.id).join(' ')} shows it again; --report writes it with charts.`,
  );
  return lines.join('\n');
}

function bytesText(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${fmtNumber(bytes / 1024 ** 3, 2)} GiB`;
  if (bytes >= 1024 ** 2) return `${fmtNumber(bytes / 1024 ** 2, 1)} MiB`;
  if (bytes >= 1024) return `${fmtNumber(bytes / 1024, 1)} KiB`;
  return `${fmtNumber(bytes)} bytes`;
}

/** What a run would do, in words. */
export function planText(plan: RunPlan): string {
  const t = plan.target;
  const where = [
    t.kind,
    t.profile ? `profile ${t.profile}` : '',
    t.security,
    t.nodes ? `${t.nodes} node${t.nodes > 1 ? 's' : ''} started for the run` : '',
  ].filter(Boolean);
  const topics = plan.topics;
  const configs = Object.entries(topics.configs)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  const load = plan.load;
  const rate =
    load.rate === 'find-max'
      ? `find-max${load.rateCeiling !== null ? ` (at most ${fmtNumber(load.rateCeiling)} rec/s)` : ''}`
      : load.rate === 'max'
        ? load.targetRate !== null
          ? `max, capped at the ceiling: ${fmtNumber(load.targetRate)} rec/s`
          : 'max (closed loop, as fast as acks come back)'
        : `${fmtNumber(load.rate)} rec/s (open loop)`;
  const length =
    load.records !== null
      ? `${fmtNumber(load.records)} records`
      : `${(load.durationMs ?? 0) / 1000} s${load.warmupMs > 0 ? ` (${load.warmupMs / 1000} s warm-up)` : ''}`;
  const rows = [
    ['target', `${t.name}: ${where.join(', ')}${t.bootstrap ? ` at ${t.bootstrap}` : ''}`],
    [
      'topics',
      `${topics.count} x ${topics.pattern}${topics.idle > 0 ? ` and ${topics.idle} idle` : ''}, ${topics.partitions} partition(s), replication factor ${topics.replicationFactor}`,
    ],
    ['configs', configs],
    [
      'afterwards',
      `topics ${topics.afterRun}; if one exists already: ${topics.ifExists === 'fail' ? 'the run fails' : 'reused as it is'}`,
    ],
    [
      'producers',
      load.producers === 0 ? 'none' : `${load.producers}, acks ${load.acks}, messages of ${load.messageSize}`,
    ],
    ['rate', load.producers === 0 ? '-' : rate],
    [
      'consumers',
      load.consumers === 0 ? 'none' : `${load.consumers} in each of ${load.consumerGroups} group(s)`,
    ],
    ['producer props', propertiesText(load.producerProperties)],
    ['consumer props', propertiesText(load.consumerProperties)],
    ['length', length],
    [
      'sends',
      load.estimatedRecords === null
        ? 'unknown: as many records as the target takes (set a rate or a ceiling to bound it)'
        : `at most ${fmtNumber(load.estimatedRecords)} records, ${bytesText(load.estimatedBytes ?? 0)} of values${load.preloadBytes > 0 ? ' (preload included)' : ''}`,
    ],
  ];
  return [table(rows), ...plan.notes.map((n) => `note: ${n}`)].join('\n');
}

/** --dry-run: the plans, checked as a run would check them; nothing is created or sent. */
function dryRun(
  scenarios: Scenario[],
  json: boolean,
  maxRate: number | undefined,
  agents: AgentEndpoint[] | undefined,
): number {
  const plans = scenarios.map((s) => {
    const plan = planRun(s, maxRate === undefined ? {} : { maxRate });
    if (!agents) return { scenario: s.name, plan };
    // The --agents split (a profile's agents are split the same way when the run starts).
    const split = agentShares(agents, s.producers.count, s.consumers.count, s.consumers.groups);
    return {
      scenario: s.name,
      plan: { ...plan, agents: agents.map((a, i) => ({ ...a, ...split[i] })) },
    };
  });
  if (json) {
    process.stdout.write(`${JSON.stringify(plans.length === 1 ? plans[0]?.plan : plans, null, 2)}\n`);
    return 0;
  }
  const out = ['dry run: nothing is created or sent, and kbench does not connect to the target.'];
  for (const { scenario, plan } of plans) {
    const agentRows =
      'agents' in plan
        ? plan.agents.map((a) => `agent ${a.address}: ${a.producers} producer(s), ${a.consumers} consumer(s)`)
        : [];
    out.push(`\n${scenario}\n${planText(plan)}${agentRows.map((r) => `\n${r}`).join('')}`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
  return 0;
}

/** Prints the stored runs as JSON (one object, or a list for a sweep); exit 1 if any failed. */
function report(results: RunRecord[], json: boolean, series = results.length > 1): number {
  if (json) process.stdout.write(`${JSON.stringify(series ? results : results[0], null, 2)}\n`);
  return results.some((r) => r.status === 'failed') ? 1 : 0;
}

/** What a series' runs are, for its progress lines: repeats of one plan, targets, or a sweep's points. */
function seriesWord(plans: Scenario[]): string {
  const first = plans[0];
  if (!first || plans.some((p) => p.name !== first.name)) return 'sweep';
  return plans.every((p) => p.target === first.target) ? 'repeat' : 'target';
}

/** Set by the first Ctrl-C (or SIGTERM): the run under way stops and no further one starts. */
let interruptedBySignal = false;

/** Whether Ctrl-C (or SIGTERM) has stopped runPlans: callers running several batches stop too. */
export function interrupted(): boolean {
  return interruptedBySignal;
}

/**
 * Runs resolved scenarios one after another (@kbench/app's runSeries) with a progress line each,
 * each named in the run slot the caller holds; Ctrl-C (or SIGINT from the workbench's Stop) stops
 * cleanly. With `endOnFailure`, the series ends at the first run that does not complete.
 */
export async function runPlans(
  items: SeriesItem[],
  json: boolean,
  {
    endOnFailure = false,
    slot,
    maxRate,
    agents,
    agentToken,
  }: {
    maxRate?: number;
    endOnFailure?: boolean;
    slot: SlotHold;
    agents?: AgentEndpoint[];
    agentToken?: string;
  },
): Promise<RunRecord[]> {
  const plans = items.map((i) => i.scenario);
  const history = await History.open();
  // Installed before the slot names a run, so a signal sent to the pid it names always stops cleanly.
  let current: LiveRun | null = null;
  let progress: ProgressLine | null = null;
  const onSignal = () => {
    if (interruptedBySignal) process.exit(130);
    interruptedBySignal = true;
    process.stderr.write('\nstopping (Ctrl-C again to quit at once)...\n');
    current?.stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const outcome = await runSeries(items, {
      history,
      hold: slot,
      endOnFailure,
      ...(maxRate === undefined ? {} : { maxRate }),
      ...(agents ? { agents } : {}),
      ...(agentToken === undefined ? {} : { agentToken }),
      interrupted: () => interruptedBySignal,
      beforeRun: ({ scenario: plan }, i) => {
        if (plans.length > 1)
          process.stderr.write(
            `\n${seriesWord(plans)} ${i + 1}/${plans.length}: ${plan.name} -> ${plan.target}\n`,
          );
      },
      onStart: (run, _i, others) => {
        current = run;
        if (interruptedBySignal) run.stop();
        process.stderr.write(
          `run ${run.id}: ${run.scenario.name} -> ${run.scenario.target} (history: ${history.path})\n`,
        );
        if (others.length > 0) process.stderr.write(`warning: this run ${concurrentWarning(others)}\n`);
        const line = new ProgressLine();
        progress = line;
        run.on('sample', (s) => line.sample(s));
        run.on('progress', (p) => line.update(p));
        run.on('log', ({ level, message }: { level: string; message: string }) => {
          if (level === 'info' || process.env.KBENCH_DEBUG) line.note(message);
        });
      },
      onEnd: (record) => {
        current = null;
        progress?.end();
        if (!json)
          process.stdout.write(
            `\n${runHeader(record)}\n\n${summaryText(record.summary, record.scenario, record.concurrentWith)}${agentsText(record.environment.agents)}${faultsText(record.faults)}\n`,
          );
      },
    });
    const ended = outcome.endedAt;
    if (endOnFailure && ended)
      process.stderr.write(
        `\nthe sweep ended at run ${ended.index + 1} of ${plans.length} (${ended.status})\n`,
      );
    return outcome.records;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** `kbench rerun <id>`: the stored, fully resolved scenario of a run, run again exactly. */
export async function rerunCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('rerun', argv, {
    json: { type: 'boolean' },
    concurrent: { type: 'boolean' },
  });
  if (positionals.length !== 1) throw new UsageError('kbench rerun: give one run id (see kbench list)');
  const history = await History.open();
  const id = positionals[0] as string;
  const original = await history.getRun(id);
  if (!original) throw new UsageError(`kbench rerun: no run ${JSON.stringify(id)} in ${history.path}`);
  // Re-validated, so a scenario stored by an older version gets today's checks.
  const scenario = parseScenario(original.scenario, `run ${original.id}`);
  process.stderr.write(`rerunning ${original.id} (${original.scenario.name})\n`);
  const json = Boolean(values.json);
  const results = await withRunSlot(
    { command: 'kbench rerun', name: scenario.name },
    Boolean(values.concurrent),
    (slot) => runPlans([{ scenario, source: original.source }], json, { slot }),
  );
  return report(results, json);
}
