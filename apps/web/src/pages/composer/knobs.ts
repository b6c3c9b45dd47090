// The raw scenario the composer edits (unvalidated, as the YAML holds it): reading and removing a knob
// by its path, a knob's value as the text of an input and back, and the issues that belong to a knob.
import { type FieldInfo, parseScenario, type ScenarioIssue } from '@kbench/schema';

export type Raw = Record<string, unknown>;

/** What every knob left out becomes: placeholders, and a new fault's time. */
export const DEFAULTS = parseScenario({}) as unknown as Raw;

export function valueAt(obj: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Raw)[key] : undefined), obj);
}

export function withoutKnob(raw: Raw, path: string): Raw {
  const copy = structuredClone(raw);
  const parts = path.split('.');
  const parent = valueAt(copy, parts.slice(0, -1).join('.'));
  const target = parts.length === 1 ? copy : parent;
  if (target && typeof target === 'object') delete (target as Raw)[parts.at(-1) as string];
  return copy;
}

/** Text typed into a field, as the value the YAML should hold. */
export function fromInput(info: FieldInfo, text: string): unknown {
  const trimmed = text.trim();
  if (info.kind === 'integer' || info.kind === 'number')
    return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : trimmed;
  if (info.kind === 'enum') {
    const option = info.options?.find((o) => String(o) === trimmed);
    return option ?? trimmed;
  }
  if (info.kind === 'size' && /^\d+$/.test(trimmed)) return Number(trimmed);
  return text;
}

export function toInput(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

export function issuesFor(issues: ScenarioIssue[], path: string): ScenarioIssue[] {
  return issues.filter(
    (i) => i.path === path || i.path.startsWith(`${path}.`) || i.path.startsWith(`${path}[`),
  );
}
