// The server's HTTP API: what each route takes (params, query, body) and answers, declared once.
// The server generates its Fastify route schemas from these with `jsonSchemaOf`, and the web app
// types its calls with the inferred types, so neither writes the shapes again.
import { z } from 'zod';
import { AGENT_ROLES } from './agents.js';
import { scenarioIssueSchema } from './errors.js';
import type { TargetProfile } from './profile.js';
import { RUN_STATUSES } from './run.js';

/** What every 4xx answer carries: the problem, and for a bad scenario or profile each field's. */
export const errorBodySchema = z.object({
  error: z.string(),
  issues: z.array(scenarioIssueSchema).optional(),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;

/** `:id` of /api/runs/:id/...: a run id or a unique prefix of one. */
export const runIdParamsSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z0-9_-]+$/),
});
export type RunIdParams = z.infer<typeof runIdParamsSchema>;

/** POST /api/runs: exactly one of scenario, yaml or path (checked by the route, for a clearer answer). */
export const startRunBodySchema = z.strictObject({
  /** A scenario as an object, as a file would hold it. */
  scenario: z.record(z.string(), z.unknown()).optional(),
  /** A scenario's YAML or JSON text. */
  yaml: z.string().max(1_000_000).optional(),
  /** A file of the scenario library (`kreps-2014/producer-1-thread.yaml`, `user/mine.yaml`). */
  path: z.string().min(1).max(1000).optional(),
  /** `knob.path=<yaml value>` overrides, as the CLI's --set. */
  set: z.array(z.string().min(1).max(10_000)).max(100).optional(),
  /** Run even while another run is going on this machine; both record concurrentWith. */
  concurrent: z.boolean().optional(),
});
export type StartRunBody = z.infer<typeof startRunBodySchema>;

/** What POST /api/runs and POST /api/runs/:id/stop answer. */
export const runIdBodySchema = z.object({ id: z.string() });
export type RunIdBody = z.infer<typeof runIdBodySchema>;

/** GET /api/runs: the run list, filtered. */
export const runQuerySchema = z.strictObject({
  status: z.enum(RUN_STATUSES).optional(),
  search: z.string().max(200).optional(),
  limit: z.number().int().min(1).max(10_000).optional(),
});
export type RunQuery = z.infer<typeof runQuerySchema>;

/** PATCH /api/runs/:id: new tags (no commas, not starting with a space) and notes. */
export const runChangeSchema = z
  .strictObject({
    tags: z
      .array(
        z
          .string()
          .min(1)
          .max(60)
          .regex(/^[^,\s][^,]*$/),
      )
      .max(50)
      .optional(),
    notes: z.string().max(20_000).optional(),
  })
  .meta({ minProperties: 1 });
export type RunChange = z.infer<typeof runChangeSchema>;

/** GET /api/runs/version: changes whenever the history does, whichever process wrote it. */
export const historyVersionSchema = z.object({ version: z.string() });

/** DELETE /api/runs/:id and /api/profiles/:name. */
export const deletedSchema = z.object({ deleted: z.string() });

/** Runs the server runs one after another (a reproduction, or a sweep's points), as far as they got. */
export const seriesInfoSchema = z.object({
  total: z.number().int(),
  /** Runs started so far, in order. */
  ids: z.array(z.string()),
  finished: z.boolean(),
  /** Why the series ended before its last run, if it did. */
  error: z.string().nullable(),
});
export type SeriesInfo = z.infer<typeof seriesInfoSchema>;

/** GET /api/runs/:id/sweep: a series over the values of one knob. */
export const sweepInfoSchema = seriesInfoSchema.extend({ knob: z.string() });
export type SweepInfo = z.infer<typeof sweepInfoSchema>;

/** GET /api/runs/:id/owner: who runs a run and whether this server's Stop reaches it. */
export const runOwnerSchema = z.object({
  id: z.string(),
  /** The process running it, as the run slot names it; null when no process on this machine does. */
  owner: z.string().nullable(),
  /** True when this server's Stop reaches it (its own run, or a CLI run it can signal). */
  stoppable: z.boolean(),
  /** Why it cannot be stopped from here, or null. */
  reason: z.string().nullable(),
});
export type RunOwner = z.infer<typeof runOwnerSchema>;

/** GET /api/scenarios/*: a library path. */
export const scenarioPathParamsSchema = z.object({ '*': z.string().max(1000) });

/** POST /api/scenarios: save the composer's scenario as one of the person's own. */
export const saveScenarioBodySchema = z.strictObject({
  file: z.string().min(1).max(100),
  yaml: z.string().max(1_000_000),
  overwrite: z.boolean().optional(),
});
export type SaveScenarioBody = z.infer<typeof saveScenarioBodySchema>;

export const savedScenarioSchema = z.object({ path: z.string() });

const folderField = z.string().min(1).max(200);

/** POST /api/reproductions: a write-up folder, run as one series. */
export const startReproductionBodySchema = z.strictObject({
  folder: folderField,
  quick: z.boolean().optional(),
  concurrent: z.boolean().optional(),
});
export type StartReproductionBody = z.infer<typeof startReproductionBodySchema>;

/** GET /api/reproductions/results: a folder's latest reproduction, or the one with this tag. */
export const reproductionResultsQuerySchema = z.strictObject({
  folder: folderField,
  tag: z.string().min(1).max(300).optional(),
});
export type ReproductionResultsQuery = z.infer<typeof reproductionResultsQuerySchema>;

/** A chart image's file name: `<chart id>.svg` or `.png`. */
export const CHART_FILE_PATTERN = /^([a-z0-9-]+)\.(svg|png)$/;
/** One run id, or up to 8 for a comparison, comma-separated. */
export const RUN_ID_LIST_PATTERN = /^[A-Za-z0-9_-]+(,[A-Za-z0-9_-]+){0,7}$/;

/** GET /api/charts/:name: a chart of one run or a comparison, as an image. */
export const chartParamsSchema = z.object({ name: z.string().regex(CHART_FILE_PATTERN) });
export type ChartParams = z.infer<typeof chartParamsSchema>;
/** The runs a chart or a comparison report draws. */
export const runIdListQuerySchema = z.strictObject({ ids: z.string().regex(RUN_ID_LIST_PATTERN) });
export type RunIdListQuery = z.infer<typeof runIdListQuerySchema>;

/** DELETE /api/profiles/:name. */
export const profileNameParamsSchema = z.object({
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z][A-Za-z0-9._-]*$/),
});
/** POST /api/profiles?replace=true replaces a profile of that name. */
export const profileSaveQuerySchema = z.strictObject({ replace: z.boolean().optional() });

/**
 * What the API shows of a profile (GET /api/profiles, POST's answer): every field of TargetProfile,
 * secrets already masked by maskProfile; a field outside this shape would not be written, so the
 * check below fails the build when TargetProfile gains a field this does not list.
 */
const text = z.string();
export const maskedProfileSchema = z.object({
  name: text,
  description: text.optional(),
  bootstrap: text,
  tls: z
    .object({
      ca: text.optional(),
      cert: text.optional(),
      key: text.optional(),
      passphrase: text.optional(),
      rejectUnauthorized: z.boolean().optional(),
      servername: text.optional(),
    })
    .optional(),
  sasl: z
    .object({
      mechanism: text,
      username: text.optional(),
      password: text.optional(),
      tokenFile: text.optional(),
      tokenCommand: text.optional(),
    })
    .optional(),
  maxRate: z.number().optional(),
  agents: z
    .array(z.object({ address: text, roles: z.array(z.enum(AGENT_ROLES)), name: text.optional() }))
    .optional(),
  agentToken: text.optional(),
  agentTokenFile: text.optional(),
  agentTls: z.object({ ca: text.optional(), insecure: z.boolean().optional() }).optional(),
  metrics: z.array(z.object({ url: text, kind: text, node: text.optional() })).optional(),
});
type Unlisted<A, B> = Exclude<keyof A, keyof B>;
/** Compile-time: every TargetProfile field (and of its parts) is in maskedProfileSchema. */
export const maskedProfileCoversProfile: [
  Unlisted<TargetProfile, z.infer<typeof maskedProfileSchema>>,
  Unlisted<NonNullable<TargetProfile['tls']>, NonNullable<z.infer<typeof maskedProfileSchema>['tls']>>,
  Unlisted<
    NonNullable<TargetProfile['agentTls']>,
    NonNullable<z.infer<typeof maskedProfileSchema>['agentTls']>
  >,
] extends [never, never, never]
  ? true
  : never = true;

export const healthSchema = z.object({ ok: z.boolean(), version: z.string() });

/** A JSON Schema (draft-07, which Fastify's ajv and fast-json-stringify read). */
export type JsonSchema = Record<string, unknown>;

/**
 * The JSON Schema of a zod schema, for a Fastify route. `request`: what ajv validates a body,
 * params or query against (the input side; closed objects refuse unknown fields). `response`:
 * what fast-json-stringify serialises, without `required` (a run stored before a field existed
 * is answered without it, not refused with a 500).
 */
export function jsonSchemaOf(schema: z.ZodType, use: 'request' | 'response'): JsonSchema {
  const json = z.toJSONSchema(schema, {
    target: 'draft-07',
    io: use === 'request' ? 'input' : 'output',
    // Custom shapes (the resolved scenario) carry their JSON Schema in their metadata.
    unrepresentable: 'any',
  }) as JsonSchema;
  delete json.$schema;
  return use === 'response' ? withoutRequired(json) : json;
}

function withoutRequired(node: unknown): JsonSchema {
  if (Array.isArray(node)) return node.map(withoutRequired) as unknown as JsonSchema;
  if (node === null || typeof node !== 'object') return node as JsonSchema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'required' && Array.isArray(value)) continue;
    // Property names are data, not keywords: keep a property called `required`.
    out[key] = key === 'properties' ? mapValues(value as JsonSchema) : withoutRequired(value);
  }
  return out;
}

function mapValues(props: JsonSchema): JsonSchema {
  return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, withoutRequired(v)]));
}
