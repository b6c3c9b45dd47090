import { z } from 'zod';
import { KNOWN_FIELDS } from './fields.js';

/** One problem in a scenario: where it is (a dotted path) and what is allowed there. */
export const scenarioIssueSchema = z.object({ path: z.string(), message: z.string() });
export type ScenarioIssue = z.infer<typeof scenarioIssueSchema>;

export class ScenarioError extends Error {
  readonly issues: ScenarioIssue[];
  constructor(issues: ScenarioIssue[], source?: string) {
    const where = source ? `${source}: ` : '';
    super(`${where}invalid scenario\n${issues.map((i) => `  ${formatIssue(i)}`).join('\n')}`);
    this.name = 'ScenarioError';
    this.issues = issues;
  }
}

export function formatIssue(issue: ScenarioIssue): string {
  return issue.path ? `${issue.path}: ${issue.message}` : issue.message;
}

/** Dotted path as people write it: producers.acks, faults[1].at */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

/** The KNOWN_FIELDS key for a path: array indexes become '*'. */
export function fieldsKey(path: readonly PropertyKey[]): string {
  return path.map((p) => (typeof p === 'number' ? '*' : String(p))).join('.');
}

/** What `input` holds at `path`: undefined where the path leaves it. */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let node = input;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

/**
 * A field of the wrong type, or a missing one: `is required (string)`, `must be an object (got 1)`.
 * `input` is the value that was checked (zod's issues do not carry the field's own value).
 */
export function invalidTypeMessage(issue: z.core.$ZodIssueInvalidType, input: unknown): string {
  const value = issue.input ?? valueAt(input, issue.path);
  if (value === undefined) return `is required (${issue.expected})`;
  const expected =
    issue.expected === 'object' ? 'an object' : issue.expected === 'array' ? 'a list' : `a ${issue.expected}`;
  return `must be ${expected} (got ${JSON.stringify(value)})`;
}

/**
 * The scenario issues of a zod error. `input`, the value that was checked, tells a missing field
 * (`is required`) from one of the wrong type (`must be an object (got 1)`): zod's own issues do not
 * carry the value.
 */
export function issuesFromZod(
  error: z.ZodError,
  prefix: readonly PropertyKey[] = [],
  input?: unknown,
): ScenarioIssue[] {
  const out: ScenarioIssue[] = [];
  for (const issue of error.issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      const allowed = KNOWN_FIELDS.get(fieldsKey(path)) ?? [];
      for (const key of issue.keys) {
        out.push({
          path: formatPath([...path, key]),
          message: `unknown field; allowed fields here: ${allowed.join(', ')}`,
        });
      }
      continue;
    }
    let message = issue.message;
    if (issue.code === 'invalid_type') message = invalidTypeMessage(issue, input);
    out.push({ path: formatPath(path), message });
  }
  return out;
}
