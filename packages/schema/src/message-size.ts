// producers.messageSize: a fixed size, a uniform range, a distribution, or a payload file.
import { z } from 'zod';
import { KNOWN_FIELDS, size } from './fields.js';

/** Largest message the broker accepts by default (Kafka's message.max.bytes is about 1 MB; we allow 16 MB). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
export const SIZE_DISTRIBUTIONS = ['normal', 'exponential'] as const;

export interface UniformSize {
  min: number;
  max: number;
}
export interface NormalSize {
  distribution: 'normal';
  mean: number;
  stddev: number;
  min?: number;
  max?: number;
}
export interface ExponentialSize {
  distribution: 'exponential';
  mean: number;
  min?: number;
  max?: number;
}
export interface PayloadFileSize {
  /** A file whose whole content is the value of every record (as OMB's payloadFile). */
  payloadFile: string;
}
export type MessageSize = number | UniformSize | NormalSize | ExponentialSize | PayloadFileSize;

const PATH = 'producers.messageSize';
KNOWN_FIELDS.set(PATH, ['min', 'max', 'distribution', 'mean', 'stddev', 'payloadFile']);

const bytes = (min = 0) => size({ min, max: MAX_MESSAGE_BYTES });
const bounds = { min: bytes(1).optional(), max: bytes(1).optional() };
const minNotAboveMax = (r: { min?: number; max?: number }) =>
  r.min === undefined || r.max === undefined || r.min <= r.max;

const uniform = z
  .strictObject({ min: bytes(), max: bytes() })
  .refine(minNotAboveMax, { message: 'must not be larger than max', path: ['min'] });
const normal = z
  .strictObject({
    distribution: z.literal('normal'),
    mean: bytes(1),
    stddev: size({ min: 0, max: MAX_MESSAGE_BYTES }),
    ...bounds,
  })
  .refine(minNotAboveMax, { message: 'must not be larger than max', path: ['min'] });
const exponential = z
  .strictObject({ distribution: z.literal('exponential'), mean: bytes(1), ...bounds })
  .refine(minNotAboveMax, { message: 'must not be larger than max', path: ['min'] });
const payloadFile = z.strictObject({
  payloadFile: z.string().min(1, 'must be the path of a file whose content is the value of every record'),
});

const FORMS: Record<string, string> = {
  normal: 'distribution, mean, stddev, min, max',
  exponential: 'distribution, mean, min, max',
};

export const messageSizeSchema = z.unknown().transform((input, ctx): MessageSize => {
  const fail = (message: string, path: PropertyKey[] = []) => {
    ctx.addIssue({ code: 'custom', message, path });
    return z.NEVER;
  };
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const o = input as Record<string, unknown>;
    let schema: z.ZodType<MessageSize> = uniform;
    if ('payloadFile' in o) schema = payloadFile;
    else if ('distribution' in o) {
      if (o.distribution === 'normal') schema = normal;
      else if (o.distribution === 'exponential') schema = exponential;
      else
        return fail(
          `must be one of ${SIZE_DISTRIBUTIONS.join(', ')} (got ${JSON.stringify(o.distribution)}); normal takes mean, stddev, min?, max?; exponential takes mean, min?, max?`,
          ['distribution'],
        );
    }
    const parsed = schema.safeParse(input);
    if (parsed.success) return parsed.data;
    const form =
      'payloadFile' in o ? 'payloadFile' : 'distribution' in o ? FORMS[String(o.distribution)] : 'min, max';
    for (const issue of parsed.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) fail(`unknown field; allowed fields here: ${form}`, [key]);
      } else ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    }
    return z.NEVER;
  }
  const parsed = bytes().safeParse(input);
  if (parsed.success) return parsed.data;
  return fail(
    `must be a size in bytes (100, 1KB), a range { min, max }, { distribution: normal, mean, stddev, min?, max? }, { distribution: exponential, mean, min?, max? } or { payloadFile: <path> }, up to ${MAX_MESSAGE_BYTES} bytes (got ${JSON.stringify(input)})`,
  );
});

/** The smallest and largest value a message size can draw (payload files: unknown here, null). */
export function messageSizeBounds(s: MessageSize): UniformSize | null {
  if (typeof s === 'number') return { min: s, max: s };
  if ('payloadFile' in s) return null;
  if ('distribution' in s) return { min: s.min ?? 1, max: s.max ?? MAX_MESSAGE_BYTES };
  return s;
}

/** The mean size (before clamping for distributions); null for payload files, whose size is the file's. */
export function meanMessageSize(s: MessageSize): number | null {
  if (typeof s === 'number') return s;
  if ('payloadFile' in s) return null;
  if ('distribution' in s) return s.mean;
  return (s.min + s.max) / 2;
}

/** How a message size reads in a plan or a table. */
export function describeMessageSize(s: MessageSize): string {
  if (typeof s === 'number') return `${s} bytes`;
  if ('payloadFile' in s) return `the content of ${s.payloadFile}`;
  if (!('distribution' in s)) return `${s.min} to ${s.max} bytes`;
  const clamp = `, clamped to ${s.min ?? 1} to ${s.max ?? MAX_MESSAGE_BYTES} bytes`;
  if (s.distribution === 'normal') return `normal, mean ${s.mean} bytes, stddev ${s.stddev}${clamp}`;
  return `exponential, mean ${s.mean} bytes${clamp}`;
}

/**
 * (No node:path here: the web app uses this package too.)
 * A raw scenario read from `scenarioFile` with a relative `producers.messageSize.payloadFile`
 * made absolute (relative to the scenario file's folder). Other values are returned as they are.
 */
export function resolvePayloadFile<T>(raw: T, scenarioFile: string): T {
  const producers = (raw as { producers?: { messageSize?: unknown } } | null)?.producers;
  const ms = producers?.messageSize as { payloadFile?: unknown } | undefined;
  if (
    !ms ||
    typeof ms !== 'object' ||
    typeof ms.payloadFile !== 'string' ||
    /^([/\\]|[A-Za-z]:)/.test(ms.payloadFile)
  )
    return raw;
  const copy = structuredClone(raw) as { producers: { messageSize: { payloadFile: string } } };
  const slash = Math.max(scenarioFile.lastIndexOf('/'), scenarioFile.lastIndexOf('\\'));
  const folder = slash >= 0 ? scenarioFile.slice(0, slash + 1) : './';
  copy.producers.messageSize.payloadFile = `${folder}${ms.payloadFile.replace(/^\.\//, '')}`;
  return copy as T;
}
