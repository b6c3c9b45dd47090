// Writes the Prometheus text exposition format 0.0.4: one family at a time, HELP and TYPE before its
// samples, label values and help escaped as the format asks.

/** The content type a scrape answer carries. */
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type MetricType = 'counter' | 'gauge';

export interface PromSeries {
  labels?: Record<string, string>;
  value: number;
}

export interface PromFamily {
  /** A counter's name ends in `_total`. */
  name: string;
  type: MetricType;
  help: string;
  series: PromSeries[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function escapeLabel(value: string): string {
  return value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');
}

function escapeHelp(text: string): string {
  return text.replaceAll('\\', '\\\\').replaceAll('\n', '\\n');
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

/** The exposition of these families, in order; a family without series keeps its HELP and TYPE. */
export function renderExposition(families: PromFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    if (!NAME.test(family.name)) throw new Error(`bad metric name ${family.name}`);
    if (family.type === 'counter' && !family.name.endsWith('_total'))
      throw new Error(`a counter's name ends in _total: ${family.name}`);
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`);
    lines.push(`# TYPE ${family.name} ${family.type}`);
    for (const { labels = {}, value } of family.series) {
      const pairs = Object.entries(labels).map(([key, v]) => {
        if (!LABEL.test(key)) throw new Error(`bad label name ${key}`);
        return `${key}="${escapeLabel(v)}"`;
      });
      const labelText = pairs.length > 0 ? `{${pairs.join(',')}}` : '';
      lines.push(`${family.name}${labelText} ${formatValue(value)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
