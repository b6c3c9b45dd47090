// Which settings differ between scenarios: what a comparison must point out before any figure.

/** Flattens nested settings to dotted paths (lists stay whole, as JSON). */
export function flattenSettings(
  value: unknown,
  prefix = '',
  out: Record<string, string> = {},
): Record<string, string> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value))
      flattenSettings(inner, prefix ? `${prefix}.${key}` : key, out);
  } else if (prefix) {
    out[prefix] = typeof value === 'string' ? value : JSON.stringify(value ?? null);
  }
  return out;
}

export interface SettingDifference {
  path: string;
  /** One value per scenario, in order; '-' where a scenario does not have the setting. */
  values: string[];
}

/** The settings whose values are not the same in every scenario (names and descriptions aside). */
export function scenarioDifferences(
  scenarios: unknown[],
  ignore: string[] = ['name', 'description'],
): SettingDifference[] {
  const flat = scenarios.map((s) => flattenSettings(s));
  const paths = [...new Set(flat.flatMap((f) => Object.keys(f)))].filter((p) => !ignore.includes(p)).sort();
  return paths
    .map((path) => ({ path, values: flat.map((f) => f[path] ?? '-') }))
    .filter((d) => new Set(d.values).size > 1);
}
