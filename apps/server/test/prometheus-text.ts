// A strict reader of the Prometheus text format 0.0.4 for tests: every line is a HELP, a TYPE or a
// sample; names and labels are well formed; a family's TYPE comes once and before its samples; a
// counter's name ends in _total. Throws naming the line otherwise.

/** Each sample's value by `name{labels}`, labels sorted by name. */
export type Samples = Map<string, number>;

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"(?:,|$)/;

function parseLabels(text: string, at: string): [string, string][] {
  const out: [string, string][] = [];
  let rest = text;
  while (rest.length > 0) {
    const match = LABEL.exec(rest);
    if (!match) throw new Error(`${at}: bad labels ${JSON.stringify(rest)}`);
    out.push([match[1]!, match[2]!]);
    rest = rest.slice(match[0].length);
  }
  return out.sort(([a], [b]) => a.localeCompare(b));
}

function parseValue(text: string, at: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`${at}: bad value ${text}`);
  return Number(text);
}

export function parseExposition(text: string): Samples {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const types = new Map<string, string>();
  const helped = new Set<string>();
  const samples: Samples = new Map();
  const seenFamilies = new Set<string>();
  text
    .slice(0, -1)
    .split('\n')
    .forEach((line, index) => {
      const at = `line ${index + 1} (${JSON.stringify(line)})`;
      if (line.startsWith('# HELP ')) {
        const name = line.slice(7).split(' ')[0] ?? '';
        if (!NAME.test(name) || helped.has(name)) throw new Error(`${at}: bad or repeated HELP`);
        helped.add(name);
      } else if (line.startsWith('# TYPE ')) {
        const [name = '', type = '', extra] = line.slice(7).split(' ');
        if (!NAME.test(name) || !TYPES.has(type) || extra !== undefined || types.has(name))
          throw new Error(`${at}: bad or repeated TYPE`);
        if (type === 'counter' && !name.endsWith('_total'))
          throw new Error(`${at}: a counter ends in _total`);
        if (seenFamilies.has(name)) throw new Error(`${at}: TYPE after its samples`);
        types.set(name, type);
      } else if (line.startsWith('#') || line === '') {
        return;
      } else {
        const match = SAMPLE.exec(line);
        if (!match) throw new Error(`${at}: not a sample`);
        const [, name = '', labelText, valueText = ''] = match;
        const family = ['_bucket', '_sum', '_count']
          .map((suffix) => (name.endsWith(suffix) ? name.slice(0, -suffix.length) : ''))
          .find((f) => f !== '' && types.has(f));
        if (!types.has(family ?? name)) throw new Error(`${at}: a sample without a TYPE before it`);
        seenFamilies.add(family ?? name);
        const labels = labelText === undefined ? [] : parseLabels(labelText, at);
        const key =
          labels.length === 0 ? name : `${name}{${labels.map(([k, v]) => `${k}="${v}"`).join(',')}}`;
        if (samples.has(key)) throw new Error(`${at}: repeated series`);
        samples.set(key, parseValue(valueText, at));
      }
    });
  return samples;
}
