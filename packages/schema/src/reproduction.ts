// A reproduction started from the web app: every runnable experiment of a write-up folder, run as one
// series whose runs share a tag, and the shapes the server answers with.
import { z } from 'zod';
import { verdictSchema } from './published.js';
import { runStatusSchema } from './run.js';
import type { Scenario } from './scenario.js';
import { parseDurationMs } from './units.js';

const TAG = /^reproduce:(.+):(\d{8}-\d{6}(?:\.\d+)?)(-quick)?$/;

/** `reproduce:<folder>:<yyyymmdd-hhmmss>[-quick]`: the tag every run of one reproduction carries. */
export function reproductionTag(folder: string, at: Date, quick: boolean, suffix = ''): string {
  const stamp = at
    .toISOString()
    .replace(/\.\d+Z$/, '')
    .replace(/[-:]/g, '')
    .replace('T', '-');
  return `reproduce:${folder}:${stamp}${suffix}${quick ? '-quick' : ''}`;
}

/** The folder and kind of a reproduction tag; undefined for any other tag. */
export function parseReproductionTag(tag: string): { folder: string; quick: boolean } | undefined {
  const m = TAG.exec(tag);
  return m ? { folder: m[1] as string, quick: m[3] !== undefined } : undefined;
}

/** One experiment of a write-up, as the library lists it. */
export const reproductionExperimentInfoSchema = z.object({
  /** The scenario file, relative to the folder. */
  scenario: z.string(),
  /** The scenario's library path (for the composer). */
  path: z.string(),
  title: z.string(),
  /** Their figures, as published. */
  published: z.record(z.string(), z.string()),
  /** Our figures to show beside theirs (summary metric paths). */
  figures: z.array(z.string()),
  /** Why our setup may show the effect differently; empty when there is none. */
  note: z.string(),
  /** What each direction rule checks, in words. */
  says: z.array(z.string()),
});
export type ReproductionExperimentInfo = z.infer<typeof reproductionExperimentInfoSchema>;

/** Rough costs of a run beyond its warm-up and measured time, for estimates only. */
const SETUP_SECONDS = 5;
const PRELOAD_BYTES_PER_SECOND = 100 * 1024 ** 2;
const IDLE_TOPICS_PER_SECOND = 2_000;

/**
 * About how long a run takes: warm-up and measured time, a find-max search's trials, and setup. Null for a run bounded by a record count, whose length depends on its throughput.
 */
export function estimateRunSeconds(s: Scenario): number | null {
  const setup =
    SETUP_SECONDS + s.consumers.backlog / PRELOAD_BYTES_PER_SECOND + s.topics.idle / IDLE_TOPICS_PER_SECOND;
  const seconds = (d: string | undefined) => (parseDurationMs(d ?? '0s') ?? 0) / 1000;
  // A find-max search runs its trials (at most maxTrials) before the measured phase.
  const search = s.producers.rate === 'find-max' ? seconds(s.findMax.trial) * s.findMax.maxTrials : 0;
  if (s.duration === undefined) return null;
  return setup + search + seconds(s.warmup) + seconds(s.duration);
}

/** What a reproduction will take, roughly. */
export const reproductionEstimateSchema = z.object({
  runs: z.number().int(),
  /** Seconds, for the runs of known length. */
  seconds: z.number(),
  /** Runs bounded by a record count, left out of `seconds`. */
  unbounded: z.number().int(),
});
export type ReproductionEstimate = z.infer<typeof reproductionEstimateSchema>;

export function estimateReproduction(plans: Scenario[]): ReproductionEstimate {
  const each = plans.map(estimateRunSeconds);
  return {
    runs: plans.length,
    seconds: Math.round(each.reduce<number>((sum, s) => sum + (s ?? 0), 0)),
    unbounded: each.filter((s) => s === null).length,
  };
}

/** What reproducing a folder now would take, in full and quick. */
export const reproductionEstimatesSchema = z.object({
  full: reproductionEstimateSchema,
  quick: reproductionEstimateSchema,
});
export type ReproductionEstimates = z.infer<typeof reproductionEstimatesSchema>;

/** `about 1 h 32 min`, `about 2 min`, `about 40 s`: an estimate, rounded as one. */
export function aboutDuration(seconds: number): string {
  if (seconds < 90) return `about ${Math.max(1, Math.round(seconds / 5) * 5)} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `about ${minutes} min`;
  return `about ${Math.floor(minutes / 60)} h${minutes % 60 === 0 ? '' : ` ${minutes % 60} min`}`;
}

/** A write-up folder (one with a published.yaml). */
export const reproductionInfoSchema = z.object({
  folder: z.string(),
  title: z.string(),
  url: z.string(),
  setup: z.string(),
  experiments: z.array(reproductionExperimentInfoSchema),
  /** What reproducing it would take; absent when its published.yaml could not be read. */
  estimate: reproductionEstimatesSchema.optional(),
  /** Why its published.yaml could not be read; the folder cannot be reproduced then. */
  error: z.string().optional(),
});
export type ReproductionInfo = z.infer<typeof reproductionInfoSchema>;

/** A reproduction stored in the history, found by its tag. */
export const reproductionRefSchema = z.object({
  tag: z.string(),
  quick: z.boolean(),
  startedAt: z.string(),
  runs: z.number().int(),
});
export type ReproductionRef = z.infer<typeof reproductionRefSchema>;

/** Where a reproduction under way (or one this server ran) has got to. */
export const reproductionProgressSchema = z.object({
  total: z.number().int(),
  /** Runs started so far. */
  started: z.number().int(),
  /** The run under way, if any. */
  current: z.string().nullable(),
  finished: z.boolean(),
  /** Why it ended early, if it did. */
  error: z.string().nullable(),
  /** Who runs it: `this workbench`, or the kbench process the run slot names (a CLI reproduction). */
  owner: z.string(),
  /** The whole series, as estimated before it started; null when a run's length is not known ahead. */
  estimatedSeconds: z.number().nullable(),
  /** About how long the runs left take; null when not known. */
  remainingSeconds: z.number().nullable(),
});
export type ReproductionProgress = z.infer<typeof reproductionProgressSchema>;

export const reproductionRunSchema = z.object({
  id: z.string(),
  name: z.string(),
  status: runStatusSchema,
  /** The sweep value this run had, as a rule's `file.yaml[value]` names it; null without a sweep. */
  sweepValue: z.string().nullable(),
  error: z.string().nullable(),
  /** The experiment's figures, by metric path (null: not measured). */
  figures: z.record(z.string(), z.number().nullable()),
});
export type ReproductionRun = z.infer<typeof reproductionRunSchema>;

export const reproductionExperimentResultSchema = reproductionExperimentInfoSchema.extend({
  /** Why it, or some of its sweep values, cannot run here. */
  notRun: z.array(z.string()),
  runs: z.array(reproductionRunSchema),
  verdicts: z.array(verdictSchema),
});
export type ReproductionExperimentResult = z.infer<typeof reproductionExperimentResultSchema>;

export const reproductionResultsSchema = z.object({
  folder: z.string(),
  title: z.string(),
  url: z.string(),
  setup: z.string(),
  /** The reproduction shown; null when the folder has not been reproduced yet. */
  tag: z.string().nullable(),
  quick: z.boolean(),
  startedAt: z.string().nullable(),
  /** Null for a reproduction this server process did not start (it ended before a restart). */
  progress: reproductionProgressSchema.nullable(),
  /** Every stored reproduction of the folder, newest first. */
  reproductions: z.array(reproductionRefSchema),
  experiments: z.array(reproductionExperimentResultSchema),
  /** What reproducing the folder now would take, in full and quick. */
  estimate: reproductionEstimatesSchema,
});
export type ReproductionResults = z.infer<typeof reproductionResultsSchema>;

/** What POST /api/reproductions answers. */
export const reproductionStartedSchema = z.object({
  folder: z.string(),
  tag: z.string(),
  quick: z.boolean(),
  /** Runs in the series. */
  total: z.number().int(),
  firstRunId: z.string(),
  /** Experiments (or sweep values) left out, with the reason. */
  skipped: z.array(z.object({ scenario: z.string(), reason: z.string() })),
});
export type ReproductionStarted = z.infer<typeof reproductionStartedSchema>;
