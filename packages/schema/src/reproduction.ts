// A reproduction started from the web app: every runnable experiment of a write-up folder, run as one
// series whose runs share a tag, and the shapes the server answers with.
import type { Verdict } from './published.js';
import type { RunStatus } from './run.js';

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
export interface ReproductionExperimentInfo {
  /** The scenario file, relative to the folder. */
  scenario: string;
  /** The scenario's library path (for the composer). */
  path: string;
  title: string;
  /** Their figures, as published. */
  published: Record<string, string>;
  /** Our figures to show beside theirs (summary metric paths). */
  figures: string[];
  /** Why our setup may show the effect differently; empty when there is none. */
  note: string;
  /** What each direction rule checks, in words. */
  says: string[];
}

/** A write-up folder (one with a published.yaml). */
export interface ReproductionInfo {
  folder: string;
  title: string;
  url: string;
  setup: string;
  experiments: ReproductionExperimentInfo[];
  /** Why its published.yaml could not be read; the folder cannot be reproduced then. */
  error?: string;
}

/** A reproduction stored in the history, found by its tag. */
export interface ReproductionRef {
  tag: string;
  quick: boolean;
  startedAt: string;
  runs: number;
}

/** Where a reproduction this server started has got to. */
export interface ReproductionProgress {
  total: number;
  /** Runs started so far. */
  started: number;
  /** The run under way, if any. */
  current: string | null;
  finished: boolean;
  /** Why it ended early, if it did. */
  error: string | null;
}

export interface ReproductionRun {
  id: string;
  name: string;
  status: RunStatus;
  /** The sweep value this run had, as a rule's `file.yaml[value]` names it; null without a sweep. */
  sweepValue: string | null;
  error: string | null;
  /** The experiment's figures, by metric path (null: not measured). */
  figures: Record<string, number | null>;
}

export interface ReproductionExperimentResult extends ReproductionExperimentInfo {
  /** Why it, or some of its sweep values, cannot run here. */
  notRun: string[];
  runs: ReproductionRun[];
  verdicts: Verdict[];
}

export interface ReproductionResults {
  folder: string;
  title: string;
  url: string;
  setup: string;
  /** The reproduction shown; null when the folder has not been reproduced yet. */
  tag: string | null;
  quick: boolean;
  startedAt: string | null;
  /** Null for a reproduction this server process did not start (it ended before a restart). */
  progress: ReproductionProgress | null;
  /** Every stored reproduction of the folder, newest first. */
  reproductions: ReproductionRef[];
  experiments: ReproductionExperimentResult[];
}

/** What POST /api/reproductions answers. */
export interface ReproductionStarted {
  folder: string;
  tag: string;
  quick: boolean;
  /** Runs in the series. */
  total: number;
  firstRunId: string;
  /** Experiments (or sweep values) left out, with the reason. */
  skipped: { scenario: string; reason: string }[];
}
