// The scenario library as the server lists it and the web app shows it.
import { z } from 'zod';
import { scenarioIssueSchema } from './errors.js';
import type { MessageSize } from './message-size.js';
import { resolvedScenarioSchema } from './run.js';

/** The knobs a person scans a list for, from the resolved scenario. */
export const scenarioOutlineSchema = z.object({
  target: z.string(),
  driver: z.string(),
  nodes: z.number().int(),
  partitions: z.number().int(),
  producers: z.number().int(),
  consumers: z.number().int(),
  /** A size in bytes, or a { min, max } range, or a distribution: passed through whole. */
  messageSize: z.custom<MessageSize>(() => true),
  /** How long it runs: a duration ("60s") or a record count. */
  length: z.string(),
  sweep: z.boolean(),
});
export type ScenarioOutline = z.infer<typeof scenarioOutlineSchema>;

/** One scenario file of the library (user/ paths are the person's own). */
export const scenarioEntrySchema = z.object({
  path: z.string(),
  folder: z.string(),
  name: z.string(),
  description: z.string(),
  valid: z.boolean(),
  issues: z.array(scenarioIssueSchema).optional(),
  outline: scenarioOutlineSchema.optional(),
});
export type ScenarioEntry = z.infer<typeof scenarioEntrySchema>;

/** One file of the library: its text, and the resolved scenario or what is wrong with it. */
export const scenarioFileSchema = z.object({
  path: z.string(),
  text: z.string(),
  scenario: resolvedScenarioSchema.optional(),
  issues: z.array(scenarioIssueSchema).optional(),
});
export type ScenarioFile = z.infer<typeof scenarioFileSchema>;
