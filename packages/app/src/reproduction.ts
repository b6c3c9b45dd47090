// A reproduction of a published write-up: a folder of scenarios with a published.yaml listing its
// experiments and their direction rules. Planned (each experiment's runs, and why any cannot run)
// and judged (the rules on the measured runs) here for `kbench reproduce` and the workbench alike.
import { readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { RunnablePlans } from '@kbench/engine';
import type { ProfileStore } from '@kbench/engine/profiles';
import {
  type Experiment,
  evaluateRule,
  type MeasuredRun,
  type Published,
  parsePublished,
  type RunSummary,
  type Sample,
  type Scenario,
  ScenarioError,
  type ScenarioIssue,
  type Verdict,
} from '@kbench/schema';
import { loadScenarioFile, ScenarioReadError, ShortenedScenarioError } from './scenario-file.js';

/** A write-up's figures and direction rules, beside its scenarios. */
export const PUBLISHED_FILE = 'published.yaml';

/** Reads and parses a folder's published.yaml; `name` is how errors name the file. */
export async function readPublished(
  dir: string,
  name: string = join(dir, PUBLISHED_FILE),
): Promise<Published> {
  return parsePublished(await readFile(join(dir, PUBLISHED_FILE), 'utf8'), name);
}

/** An experiment's runs: its scenario (shortened for a quick reproduction) split into what can run and what not. */
export interface PlannedExperiment {
  experiment: Experiment;
  /** Where its scenario file is; the runs' source. */
  source: string;
  /** Null when the scenario could not be loaded (`notRun` says why). */
  scenario: Scenario | null;
  /** Why it, or some of its sweep values, will not run. */
  notRun: string[];
  /** The runs it makes, with each one's sweep value as the rules name it. */
  runnable: RunnablePlans['runnable'];
}

export interface PlanOptions {
  quick: boolean;
  /** Where `target: <name>` profiles are found; default $KBENCH_HOME/profiles. */
  profiles?: ProfileStore;
}

/**
 * Plans one experiment of the folder `dir`. A scenario that cannot be read or is invalid throws
 * (ScenarioReadError, ScenarioError); a run the engine cannot do here is listed in `notRun`.
 */
export async function planExperiment(
  dir: string,
  experiment: Experiment,
  opts: PlanOptions,
): Promise<PlannedExperiment> {
  const source = join(dir, experiment.scenario);
  const scenario = await loadScenarioFile(source, { quick: opts.quick }, experiment.scenario);
  const { runnablePlans } = await import('@kbench/engine');
  const plans = runnablePlans(scenario, opts.profiles ? { profiles: opts.profiles } : {});
  return { experiment, source, scenario, notRun: plans.notRun, runnable: plans.runnable };
}

const issueText = (issues: ScenarioIssue[]) => issues.map((i) => `${i.path}: ${i.message}`).join('; ');

/** Why an experiment's scenario cannot be planned, in words; undefined for an error of another kind. */
function problemOf(err: unknown, name: string): string | undefined {
  if (err instanceof ShortenedScenarioError) return `invalid when shortened: ${issueText(err.issues)}`;
  if (err instanceof ScenarioError) return `invalid scenario: ${issueText(err.issues)}`;
  const code = err instanceof ScenarioReadError ? (err.cause as NodeJS.ErrnoException).code : undefined;
  return code ? `cannot read ${name}: ${code}` : undefined;
}

/** Plans every experiment of a folder; one that cannot be planned lists why in `notRun`. */
export async function planWriteUp(
  dir: string,
  published: Published,
  opts: PlanOptions,
): Promise<PlannedExperiment[]> {
  const out: PlannedExperiment[] = [];
  for (const experiment of published.experiments) {
    const source = join(dir, experiment.scenario);
    const unplanned = (reason: string): PlannedExperiment => ({
      experiment,
      source,
      scenario: null,
      notRun: [reason],
      runnable: [],
    });
    if (isAbsolute(experiment.scenario) || experiment.scenario.split(/[\\/]/).includes('..')) {
      out.push(unplanned(`${experiment.scenario} is not a file of this folder`));
      continue;
    }
    try {
      out.push(await planExperiment(dir, experiment, opts));
    } catch (err) {
      const problem = problemOf(err, experiment.scenario);
      if (problem === undefined) throw err;
      out.push(unplanned(problem));
    }
  }
  return out;
}

/** A stored run as the rules see it: the experiment's file, its sweep value, its summary and samples. */
export function measuredRun(
  experiment: Experiment,
  run: { summary: RunSummary | null },
  sweepValue: string | null | undefined,
  samples: Sample[],
): MeasuredRun {
  return {
    file: experiment.scenario,
    ...(sweepValue === null || sweepValue === undefined ? {} : { sweepValue }),
    summary: run.summary,
    samples,
  };
}

/** Each experiment's verdicts, judged on the measured runs of the whole folder. */
export function judge(experiments: Experiment[], measured: MeasuredRun[]): Verdict[][] {
  return experiments.map((e) => e.checks.map((rule) => evaluateRule(rule, e.scenario, measured)));
}
