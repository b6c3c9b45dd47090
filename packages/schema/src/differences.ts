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

/** Every path any of the flattened scenarios has, sorted, those in `ignore` aside. */
function settingPaths(flat: Record<string, string>[], ignore: string[]): string[] {
  return [...new Set(flat.flatMap((f) => Object.keys(f)))].filter((p) => !ignore.includes(p)).sort();
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
  return settingPaths(flat, ignore)
    .map((path) => ({ path, values: flat.map((f) => f[path] ?? '-') }))
    .filter((d) => new Set(d.values).size > 1);
}

/**
 * Each name shortened to at most `max` characters around the part that differs from the others (a
 * sweep's `[knob=value]`, say), which is kept whole however long; names that fit stay as they are.
 */
export function distinctNames(names: string[], max = 40): string[] {
  const shortest = Math.min(...names.map((n) => n.length));
  let prefix = 0;
  while (prefix < shortest && names.every((n) => n[prefix] === names[0]?.[prefix])) prefix++;
  let suffix = 0;
  while (suffix < shortest - prefix && names.every((n) => n.at(-1 - suffix) === names[0]?.at(-1 - suffix)))
    suffix++;
  return names.map((name) => {
    if (name.length <= max) return name;
    if (names.length < 2 || prefix === name.length) return `${name.slice(0, max - 1).trimEnd()}…`;
    // The differing part, widened to the words it falls in.
    const start = prefix === 0 ? 0 : name.lastIndexOf(' ', prefix - 1) + 1;
    const space = name.indexOf(' ', name.length - suffix);
    const end = space === -1 ? name.length : space;
    const part = name.slice(start, end);
    const tail = end < name.length ? '…' : '';
    if (start === 0) return `${part}${tail}`;
    // As much of the name's start as fits, in whole words.
    const room = name.slice(0, Math.max(0, max - part.length - tail.length));
    const head = room.slice(0, Math.max(0, room.lastIndexOf(' '))).trimEnd();
    return `${head}…${part}${tail}`;
  });
}

export interface SideDifference {
  path: string;
  /** The values this setting has in the baseline's scenarios, distinct, in order; '-' where absent. */
  baseline: string[];
  /** And in the current runs' scenarios. */
  current: string[];
}

/**
 * The settings whose values in the current scenarios are not those of the baseline's (a gate's two
 * sides): each with the distinct values on either side. A setting that varies within one side alike on
 * both (a sweep's knob) is not a difference. Names, descriptions and targets aside.
 */
export function sideDifferences(
  baseline: unknown[],
  current: unknown[],
  ignore: string[] = ['name', 'description', 'target'],
): SideDifference[] {
  const [b, c] = [baseline.map((s) => flattenSettings(s)), current.map((s) => flattenSettings(s))];
  const distinct = (side: Record<string, string>[], path: string) => [
    ...new Set(side.map((f) => f[path] ?? '-')),
  ];
  return settingPaths([...b, ...c], ignore)
    .map((path) => ({ path, baseline: distinct(b, path), current: distinct(c, path) }))
    .filter((d) => d.baseline.length !== d.current.length || d.baseline.some((v) => !d.current.includes(v)));
}
