// JSON schemas for request validation and response serialisation, one per shape in @kbench/schema.

export const errorBody = {
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'string' },
    issues: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: { path: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
} as const;

/** The error answers every route may give. */
export const errorResponses = {
  400: errorBody,
  403: errorBody,
  404: errorBody,
  409: errorBody,
  500: errorBody,
} as const;

const nullableNumber = { type: ['number', 'null'] } as const;

const latencySummary = {
  type: ['object', 'null'],
  properties: Object.fromEntries(
    ['count', 'p50', 'p75', 'p95', 'p99', 'p999', 'p9999', 'max', 'mean', 'worst10Mean'].map((k) => [
      k,
      { type: 'number' },
    ]),
  ),
} as const;

const throughputSummary = {
  records: { type: 'number' },
  recordsPerSec: { type: 'number' },
  mbPerSec: { type: 'number' },
} as const;

export const runSummary = {
  type: ['object', 'null'],
  properties: {
    measuredSeconds: { type: 'number' },
    produced: {
      type: 'object',
      properties: { ...throughputSummary, wireMbPerSec: nullableNumber, errors: { type: 'number' } },
    },
    consumed: { type: 'object', properties: throughputSummary },
    publishLatencyMs: latencySummary,
    endToEndLatencyMs: latencySummary,
    client: {
      type: 'object',
      properties: {
        cpuCores: { type: 'number' },
        includesBroker: { type: 'boolean' },
        producerBusy: nullableNumber,
        consumerBusy: nullableNumber,
      },
    },
    // The search's trials are passed through whole.
    findMax: { type: 'object', additionalProperties: true },
  },
} as const;

/** A fault of the scenario's timeline as the run executed it. */
const faultEvent = {
  type: 'object',
  properties: {
    t: { type: 'number' },
    action: { type: 'string' },
    target: { type: ['number', 'string'] },
    node: nullableNumber,
    durationMs: nullableNumber,
    error: { type: ['string', 'null'] },
  },
} as const;

const runStatus = { type: 'string' } as const;

const runCommon = {
  id: { type: 'string' },
  status: runStatus,
  source: { type: ['string', 'null'] },
  summary: runSummary,
  error: { type: ['string', 'null'] },
  startedAt: { type: 'string' },
  finishedAt: { type: ['string', 'null'] },
  tags: { type: 'array', items: { type: 'string' } },
  notes: { type: 'string' },
  /** The runs that went on at the same time on this machine (absent for a run alone). */
  concurrentWith: { type: 'array', items: { type: 'string' } },
  /** The sweep value the run measured, and the series it belongs to (each absent when it has none). */
  sweepValue: { type: 'string' },
  series: { type: 'string' },
} as const;

export const runListItem = {
  type: 'object',
  properties: {
    ...runCommon,
    name: { type: 'string' },
    target: { type: 'string' },
    driver: { type: 'string' },
  },
} as const;

export const runRecord = {
  type: 'object',
  properties: {
    ...runCommon,
    // The resolved scenario and the environment are open-ended records: pass them through whole.
    scenario: { type: 'object', additionalProperties: true },
    environment: { type: 'object', additionalProperties: true },
    faults: { type: 'array', items: faultEvent },
  },
} as const;

export const sample = {
  type: 'object',
  properties: {
    t: { type: 'number' },
    intervalMs: { type: 'number' },
    warmup: { type: 'boolean' },
    producedRecords: { type: 'number' },
    producedBytes: { type: 'number' },
    consumedRecords: { type: 'number' },
    consumedBytes: { type: 'number' },
    errors: { type: 'number' },
    backlog: { type: 'number' },
    publishP50Ms: nullableNumber,
    publishP99Ms: nullableNumber,
    publishMaxMs: nullableNumber,
    e2eP50Ms: nullableNumber,
    e2eP99Ms: nullableNumber,
    e2eMaxMs: nullableNumber,
  },
} as const;

export const runIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' } },
} as const;
