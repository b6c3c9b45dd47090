import { parse as parseYaml, stringify as stringifyYaml, YAMLParseError } from 'yaml';
import { clientConfigConflicts } from './client-config.js';
import { fieldsKey, issuesFromZod, ScenarioError, type ScenarioIssue } from './errors.js';
import { KNOWN_FIELDS } from './fields.js';
import { type Scenario, scenarioSchema } from './scenario.js';

/**
 * Knobs that are maps of Kafka names (which hold dots): in a knob path, everything after one of
 * these is the name, so `producers.config.fetch.max.wait.ms` sets the property fetch.max.wait.ms.
 */
export const NAMED_MAP_KNOBS = ['topics.config', 'producers.config', 'consumers.config'] as const;

/** A knob path as the keys it sets, with a Kafka name inside a map knob kept whole. */
function knobParts(knob: string): string[] {
  for (const map of NAMED_MAP_KNOBS) {
    if (knob.startsWith(`${map}.`) && knob.length > map.length + 1) {
      return [...map.split('.'), knob.slice(map.length + 1)];
    }
  }
  return knob.split('.');
}

/** The scenario's issues, including those only the text as written shows. */
function validate(input: unknown) {
  const parsed = scenarioSchema.safeParse(input);
  const conflicts = clientConfigConflicts(input);
  if (parsed.success && conflicts.length === 0) return { ok: true as const, scenario: parsed.data };
  return {
    ok: false as const,
    issues: [...(parsed.success ? [] : issuesFromZod(parsed.error, [], input)), ...conflicts],
  };
}

/** Reads YAML or JSON text (JSON is YAML) into a plain value, with the line of a syntax error. */
export function readScenarioText(text: string, source?: string): unknown {
  try {
    return parseYaml(text, { prettyErrors: true }) ?? {};
  } catch (err) {
    const message =
      err instanceof YAMLParseError
        ? `not valid YAML or JSON at line ${err.linePos?.[0]?.line ?? '?'}: ${err.message.split('\n')[0]}`
        : String(err);
    throw new ScenarioError([{ path: '', message }], source);
  }
}

/** Validates a scenario and fills every default. Throws ScenarioError naming each bad field. */
export function parseScenario(input: unknown, source?: string): Scenario {
  const result = checkScenario(input);
  if (!result.ok) throw new ScenarioError(result.issues, source);
  return result.scenario;
}

export type CheckResult = { ok: true; scenario: Scenario } | { ok: false; issues: ScenarioIssue[] };

/** Like parseScenario, without throwing: for forms that show problems inline. */
export function checkScenario(input: unknown): CheckResult {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return { ok: false, issues: [{ path: '', message: 'a scenario must be an object of fields' }] };
  }
  const parsed = validate(input);
  if (!parsed.ok) return parsed;
  const scenario = parsed.scenario;
  if (scenario.sweep) {
    const issues = checkSweep(input as Record<string, unknown>, scenario.sweep);
    if (issues.length > 0) return { ok: false, issues };
  }
  return { ok: true, scenario };
}

/** Every knob a sweep or --set may name: the leaf fields of the scenario, as dotted paths. */
export function knobPaths(): string[] {
  const out: string[] = [];
  for (const [parent, fields] of KNOWN_FIELDS) {
    if (parent.includes('*') || parent === 'producers.messageSize') continue;
    for (const field of fields) {
      const path = parent ? `${parent}.${field}` : field;
      if (!KNOWN_FIELDS.has(path) || path === 'producers.messageSize') out.push(path);
    }
  }
  return out.filter((p) => !p.startsWith('sweep'));
}

function checkKnob(knob: string): string | undefined {
  const parts = knobParts(knob);
  // A property inside a map knob: the scenario's check names an unknown one.
  if (parts.length === 3 && NAMED_MAP_KNOBS.some((m) => knob.startsWith(`${m}.`))) return undefined;
  // The first part that is not a field of the part before it is what is wrong.
  for (let i = 0; i < parts.length; i++) {
    const parent = parts.slice(0, i).join('.');
    const fields = KNOWN_FIELDS.get(fieldsKey(parts.slice(0, i)));
    if (!fields) {
      return `unknown knob ${JSON.stringify(knob)}: ${JSON.stringify(parent)} is a value, not a group of knobs`;
    }
    if (!fields.includes(parts[i] ?? '')) {
      const prefix = parent ? `${parent}.` : '';
      return `unknown knob ${JSON.stringify(knob)}; known here: ${fields.map((f) => prefix + f).join(', ')}`;
    }
  }
  return undefined;
}

/** Sets a knob by dotted path in a raw (unvalidated) scenario, returning a copy. */
export function setKnob(raw: unknown, knob: string, value: unknown): Record<string, unknown> {
  const problem = checkKnob(knob);
  if (problem) throw new ScenarioError([{ path: knob, message: problem }]);
  const root = structuredClone((raw ?? {}) as Record<string, unknown>);
  const parts = knobParts(knob);
  let node: Record<string, unknown> = root;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1] ?? ''] = value;
  return root;
}

/** Applies a `--set knob.path=<yaml value>` override to a raw scenario. */
export function applySet(raw: unknown, assignment: string): Record<string, unknown> {
  const eq = assignment.indexOf('=');
  if (eq <= 0) {
    throw new ScenarioError([
      {
        path: '',
        message: `--set takes knob.path=value, e.g. producers.acks=all (got ${JSON.stringify(assignment)})`,
      },
    ]);
  }
  const knob = assignment.slice(0, eq).trim();
  const valueText = assignment.slice(eq + 1);
  let value: unknown;
  try {
    value = parseYaml(valueText);
  } catch {
    value = valueText;
  }
  return setKnob(raw, knob, value);
}

function checkSweep(
  raw: Record<string, unknown>,
  sweep: { knob: string; values: unknown[] },
): ScenarioIssue[] {
  const problem = checkKnob(sweep.knob);
  if (problem) return [{ path: 'sweep.knob', message: problem }];
  const issues: ScenarioIssue[] = [];
  sweep.values.forEach((value, i) => {
    const variant = setKnob(withoutSweep(raw), sweep.knob, value);
    const parsed = validate(variant);
    if (!parsed.ok) {
      for (const issue of parsed.issues) {
        issues.push({ path: `sweep.values[${i}]`, message: `${issue.path}: ${issue.message}` });
      }
    }
  });
  return issues;
}

function withoutSweep(raw: Record<string, unknown>): Record<string, unknown> {
  const { sweep: _sweep, ...rest } = raw;
  return rest;
}

/** One scenario per sweep value (or the scenario itself), each fully resolved and without `sweep`. */
export function expandSweep(scenario: Scenario): Scenario[] {
  if (!scenario.sweep) return [scenario];
  const { knob, values } = scenario.sweep;
  const base = withoutSweep(scenario as unknown as Record<string, unknown>);
  return values.map((value) => {
    const variant = parseScenario(setKnob(base, knob, value));
    return {
      ...variant,
      name: `${scenario.name} [${knob}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}]`,
    };
  });
}

export function scenarioToYaml(scenario: unknown): string {
  return stringifyYaml(scenario, { lineWidth: 100 });
}
