import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from './usage.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** parseArgs with our error: an unknown flag or a missing value is a usage error naming the flag. */
export function parseCommandArgs<O extends Options>(command: string, argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`kbench ${command}: ${(err as Error).message.replace(/\. To specify.*$/s, '')}`);
  }
}

export function intOption(
  command: string,
  name: string,
  value: string | undefined,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(
      `kbench ${command}: --${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(value)})`,
    );
  }
  return n;
}
