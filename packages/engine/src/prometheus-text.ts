// A parser of the Prometheus text exposition format (0.0.4, and the OpenMetrics lines it shares),
// for the cluster's metrics endpoints. Their bytes come from the network: every size and count is
// bounded before anything is kept, and no input makes it throw. What it could not read is counted
// and the first few reasons kept, so a scrape can say why figures are missing.

/** One sample line: its metric name, labels and value. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PromLimits {
  /** A body longer than this is cut here (the last, partial line dropped) and reported. */
  maxBodyBytes: number;
  /** A line longer than this is refused, not parsed. */
  maxLineBytes: number;
  /** At most this many samples are kept; the rest are counted as dropped. */
  maxSeries: number;
  /** At most this many labels a sample. */
  maxLabels: number;
}

export const PROM_LIMITS: PromLimits = {
  maxBodyBytes: 8 * 1024 * 1024,
  maxLineBytes: 64 * 1024,
  maxSeries: 50_000,
  maxLabels: 32,
};

export interface PromParse {
  samples: PromSample[];
  /** Lines that were not samples, comments or blank (the first few reasons are in `problems`). */
  badLines: number;
  /** Lines refused for their length. */
  longLines: number;
  /** Samples past maxSeries, not kept. */
  droppedSeries: number;
  problems: string[];
}

const MAX_PROBLEMS = 5;
const NAME_START = /[a-zA-Z_:]/;
const NAME_CHAR = /[a-zA-Z0-9_:]/;
const LABEL_START = /[a-zA-Z_]/;
const LABEL_CHAR = /[a-zA-Z0-9_]/;

/**
 * Parses an exposition. `keep` (default: every name) picks the metric names worth keeping, so a
 * large endpoint costs only the series asked for; a name not kept is skipped before its labels are read.
 */
export function parsePrometheusText(
  text: string,
  options: { keep?: (name: string) => boolean; limits?: Partial<PromLimits> } = {},
): PromParse {
  const limits = { ...PROM_LIMITS, ...options.limits };
  const out: PromParse = { samples: [], badLines: 0, longLines: 0, droppedSeries: 0, problems: [] };
  const problem = (line: number, why: string) => {
    out.badLines += 1;
    if (out.problems.length < MAX_PROBLEMS) out.problems.push(`line ${line}: ${why}`);
  };
  let start = 0;
  let lineNo = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    lineNo += 1;
    // Length in UTF-16 units bounds the bytes from below; a line near the limit is measured exactly.
    const length = end - start;
    if (
      length > limits.maxLineBytes ||
      (length * 3 > limits.maxLineBytes && Buffer.byteLength(text.slice(start, end)) > limits.maxLineBytes)
    ) {
      out.longLines += 1;
      if (out.problems.length < MAX_PROBLEMS)
        out.problems.push(`line ${lineNo}: longer than ${limits.maxLineBytes} bytes, refused`);
      start = end + 1;
      continue;
    }
    const line = text.slice(start, end).trim();
    start = end + 1;
    if (line === '' || line.startsWith('#')) continue;
    const parsed = parseLine(line, limits.maxLabels, options.keep);
    if (parsed === null) continue;
    if (typeof parsed === 'string') {
      problem(lineNo, parsed);
      continue;
    }
    if (out.samples.length >= limits.maxSeries) {
      out.droppedSeries += 1;
      continue;
    }
    out.samples.push(parsed);
  }
  if (out.droppedSeries > 0 && out.problems.length < MAX_PROBLEMS)
    out.problems.push(`${out.droppedSeries} samples past the first ${limits.maxSeries} were not kept`);
  return out;
}

/** A sample, null for a name not kept, or why the line is not one. */
function parseLine(
  line: string,
  maxLabels: number,
  keep: ((name: string) => boolean) | undefined,
): PromSample | string | null {
  let i = 0;
  if (!NAME_START.test(line[0] ?? '')) return 'does not start with a metric name';
  while (i < line.length && NAME_CHAR.test(line[i] as string)) i += 1;
  const name = line.slice(0, i);
  if (keep && !keep(name)) return null;
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i += 1;
    let count = 0;
    for (;;) {
      while (line[i] === ' ') i += 1;
      if (line[i] === '}') {
        i += 1;
        break;
      }
      if (!LABEL_START.test(line[i] ?? '')) return `bad label name in ${name}`;
      const nameStart = i;
      while (i < line.length && LABEL_CHAR.test(line[i] as string)) i += 1;
      const label = line.slice(nameStart, i);
      while (line[i] === ' ') i += 1;
      if (line[i] !== '=' || line[i + 1] !== '"') return `label ${label} of ${name} has no quoted value`;
      i += 2;
      let value = '';
      let closed = false;
      while (i < line.length) {
        const c = line[i] as string;
        if (c === '\\') {
          const next = line[i + 1];
          value += next === 'n' ? '\n' : next === '"' ? '"' : next === '\\' ? '\\' : `\\${next ?? ''}`;
          i += 2;
          continue;
        }
        if (c === '"') {
          closed = true;
          i += 1;
          break;
        }
        value += c;
        i += 1;
      }
      if (!closed) return `label ${label} of ${name} is not closed`;
      count += 1;
      if (count > maxLabels) return `${name} has more than ${maxLabels} labels`;
      // A label twice: the first one stands (the format forbids it; an object key must not be __proto__).
      if (label !== '__proto__' && !Object.hasOwn(labels, label)) labels[label] = value;
      while (line[i] === ' ') i += 1;
      if (line[i] === ',') {
        i += 1;
        continue;
      }
      if (line[i] === '}') {
        i += 1;
        break;
      }
      return `labels of ${name} are not closed`;
    }
  }
  const rest = line.slice(i).trim().split(/\s+/);
  if (rest.length < 1 || rest.length > 3 || rest[0] === '') return `${name} has no value`;
  const value = parseValue(rest[0] as string);
  if (value === null) return `${name} has a value that is not a number`;
  return { name, labels, value };
}

function parseValue(text: string): number | null {
  switch (text) {
    case '+Inf':
    case 'Inf':
      return Number.POSITIVE_INFINITY;
    case '-Inf':
      return Number.NEGATIVE_INFINITY;
    case 'NaN':
      return Number.NaN;
  }
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return null;
  return Number(text);
}
