// Field builders that carry their own human messages, so every consumer of the
// schema (CLI, server, web form) says the same thing about the same mistake.
import { z } from 'zod';
import { formatDurationMs, parseDurationMs, parseSizeBytes } from './units.js';

/** The fields each object in the scenario allows, by dotted path ('' is the root, arrays as '*'). */
export const KNOWN_FIELDS = new Map<string, readonly string[]>();

/** A closed object: an unknown field is an error that lists the allowed ones. */
export function closedObject<T extends z.ZodRawShape>(path: string, shape: T) {
  KNOWN_FIELDS.set(path, Object.keys(shape));
  return z.strictObject(shape);
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'object') return Array.isArray(value) ? 'a list' : 'an object';
  return String(value);
}

/** One of a fixed set of values; numbers may also be written as strings ("1" for 1). */
export function oneOf<const V extends readonly (string | number)[]>(
  values: V,
  aliases: Record<string, V[number]> = {},
) {
  const allowed = values.map(String).join(', ');
  return z.unknown().transform((input, ctx): V[number] => {
    const key = String(input);
    if (key in aliases) return aliases[key] as V[number];
    const found = values.find(
      (v) => String(v) === key && (typeof input === 'number' || typeof input === 'string'),
    );
    if (found === undefined) {
      ctx.addIssue({ code: 'custom', message: `must be one of ${allowed} (got ${describe(input)})` });
      return z.NEVER;
    }
    return found;
  });
}

/** A whole number within bounds; numeric strings are accepted so `--set x=3` and YAML agree. */
export function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return z.unknown().transform((input, ctx): number => {
    const n = typeof input === 'string' && input.trim() !== '' ? Number(input) : input;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
      ctx.addIssue({ code: 'custom', message: `must be a whole number ${range} (got ${describe(input)})` });
      return z.NEVER;
    }
    return n;
  });
}

/** A duration ("30s", "500ms", "5m", or seconds as a number), normalised to its shortest written form. */
export function duration(opts: { min?: number; max?: number } = {}) {
  return z.unknown().transform((input, ctx): string => {
    const ms = parseDurationMs(input);
    if (ms === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a duration such as 500ms, 30s, 5m or 1h (got ${describe(input)})`,
      });
      return z.NEVER;
    }
    if ((opts.min !== undefined && ms < opts.min) || (opts.max !== undefined && ms > opts.max)) {
      const range =
        opts.max === undefined
          ? `at least ${formatDurationMs(opts.min ?? 0)}`
          : opts.min === undefined
            ? `at most ${formatDurationMs(opts.max)}`
            : `from ${formatDurationMs(opts.min)} to ${formatDurationMs(opts.max)}`;
      ctx.addIssue({ code: 'custom', message: `must be ${range} (got ${describe(input)})` });
      return z.NEVER;
    }
    return formatDurationMs(ms);
  });
}

/** A size in bytes ("100", "1KB", "2GB"; KB = 1024 bytes), normalised to a number of bytes. */
export function size(opts: { min?: number; max?: number } = {}) {
  const min = opts.min ?? 0;
  const max = opts.max ?? Number.MAX_SAFE_INTEGER;
  return z.unknown().transform((input, ctx): number => {
    const bytes = parseSizeBytes(input);
    if (bytes === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a size in bytes such as 100, 16KB or 2GB (got ${describe(input)})`,
      });
      return z.NEVER;
    }
    if (bytes < min || bytes > max) {
      ctx.addIssue({
        code: 'custom',
        message: `must be from ${min} to ${max} bytes (got ${describe(input)})`,
      });
      return z.NEVER;
    }
    return bytes;
  });
}

export function bool() {
  return z.unknown().transform((input, ctx): boolean => {
    if (input === true || input === 'true') return true;
    if (input === false || input === 'false') return false;
    ctx.addIssue({ code: 'custom', message: `must be true or false (got ${describe(input)})` });
    return z.NEVER;
  });
}

/** A free text field. */
export function text() {
  return z.unknown().transform((input, ctx): string => {
    if (typeof input === 'string') return input;
    if (typeof input === 'number') return String(input);
    ctx.addIssue({ code: 'custom', message: `must be text (got ${describe(input)})` });
    return z.NEVER;
  });
}
