// Reproductions from the browser: a write-up folder (scenarios plus a published.yaml) run as one
// series, every run tagged with the reproduction's tag, and its results judged by the folder's rules,
// as `kbench reproduce` judges them.
import {
  judge,
  measuredRun,
  type PlannedExperiment,
  PUBLISHED_FILE,
  planWriteUp,
  readPublished as readPublishedFile,
  type SeriesItem,
  type WriteUpFolder,
} from '@kbench/app';
import { describeHolder, type SlotHolder } from '@kbench/history';
import {
  estimateReproduction,
  estimateRunSeconds,
  metricValue,
  type Published,
  parseReproductionTag,
  type ReproductionEstimates,
  type ReproductionExperimentInfo,
  type ReproductionInfo,
  type ReproductionProgress,
  type ReproductionResults,
  type ReproductionResultsQuery,
  type ReproductionRun,
  type ReproductionStarted,
  type RunListItem,
  reproductionInfoSchema,
  reproductionResultsQuerySchema,
  reproductionResultsSchema,
  reproductionStartedSchema,
  reproductionTag,
  ScenarioError,
  type StartReproductionBody,
  startReproductionBodySchema,
} from '@kbench/schema';
import type { FastifyInstance } from 'fastify';
import { HttpError, invalidScenario } from '../http-error.js';
import type { Series } from '../plugins/run-manager.js';
import { errorResponses, requestSchema, responseSchema } from '../route-schema.js';

/** Seconds each run of a series should take, in order (null: not known ahead). */
type RunEstimates = (number | null)[];

/**
 * About how long the runs left take: the runs not started, and what remains of the one under way
 * (`elapsed` seconds into it). Null when one of them has no known length.
 */
function remainingSeconds(each: RunEstimates, started: number, elapsed: number | null): number | null {
  const left = each.slice(started);
  const current = started > 0 && elapsed !== null ? each[started - 1] : 0;
  if (current === null || current === undefined || left.some((s) => s === null)) return null;
  return Math.round(
    left.reduce<number>((sum, s) => sum + (s ?? 0), 0) + Math.max(0, current - (elapsed ?? 0)),
  );
}

const total = (each: RunEstimates): number | null =>
  each.some((s) => s === null) ? null : Math.round(each.reduce<number>((sum, s) => sum + (s ?? 0), 0));

function readPublished(wu: WriteUpFolder): Promise<Published> {
  return readPublishedFile(wu.dir, `${wu.folder}/${PUBLISHED_FILE}`);
}

export async function reproductionRoutes(app: FastifyInstance): Promise<void> {
  /** The reproductions this server process started, by tag, with where each has got to. */
  const started = new Map<string, { series: Series; each: RunEstimates }>();

  const info = (wu: WriteUpFolder, published: Published): ReproductionInfo => ({
    folder: wu.folder,
    title: published.title,
    url: published.url,
    setup: published.setup,
    experiments: published.experiments.map(
      (e): ReproductionExperimentInfo => ({
        scenario: e.scenario,
        path: `${wu.folder}/${e.scenario}`,
        title: e.title,
        published: e.published,
        figures: e.figures,
        note: e.note,
        says: e.checks.map((c) => c.says),
      }),
    ),
  });

  const plan = (wu: WriteUpFolder, published: Published, quick: boolean) =>
    planWriteUp(wu.dir, published, { quick, profiles: app.profiles });

  /**
   * The kbench process running a reproduction whose runs are these, if one is: the holder of the run
   * under way, or between two runs a `kbench reproduce` holding the slot since before the first.
   */
  function cliReproduction(
    runs: RunListItem[],
    runningId: string | undefined,
    total: number,
  ): SlotHolder | undefined {
    if (runningId) return app.runs.slot.holderOf(runningId);
    const first = runs[0]?.startedAt;
    if (!first || runs.length >= total) return undefined;
    return app.runs.slot
      .holders()
      .find((h) => h.command === 'kbench reproduce' && h.runId === null && h.since <= first);
  }

  /** What reproducing a folder would take, from the plans of both kinds (`planned`: one already made). */
  async function estimateOf(
    wu: WriteUpFolder,
    published: Published,
    planned: { quick: boolean; plans: PlannedExperiment[] } | null = null,
  ): Promise<ReproductionEstimates> {
    const of = async (quick: boolean) =>
      estimateReproduction(
        (planned?.quick === quick ? planned.plans : await plan(wu, published, quick)).flatMap((p) =>
          p.runnable.map((r) => r.plan),
        ),
      );
    return { full: await of(false), quick: await of(true) };
  }

  /** The write-up folder named in a request, with its published.yaml read; `status` for an unknown one. */
  async function writeUp(folder: string, status: 400 | 404): Promise<[WriteUpFolder, Published]> {
    const wu = app.scenarios.writeUp(folder);
    if (!wu)
      throw new HttpError(
        status,
        `folder: no write-up folder ${JSON.stringify(folder)} (a folder of scenarios with a ${PUBLISHED_FILE})`,
      );
    try {
      return [wu, await readPublished(wu)];
    } catch (err) {
      throw new HttpError(400, `folder: ${(err as Error).message}`);
    }
  }

  app.get(
    '/api/reproductions',
    { schema: { response: { 200: responseSchema(reproductionInfoSchema.array()), ...errorResponses } } },
    async () => {
      const out: ReproductionInfo[] = [];
      for (const wu of app.scenarios.writeUps()) {
        try {
          const published = await readPublished(wu);
          out.push({ ...info(wu, published), estimate: await estimateOf(wu, published) });
        } catch (err) {
          out.push({
            folder: wu.folder,
            title: wu.folder,
            url: '',
            setup: '',
            experiments: [],
            error: (err as Error).message,
          });
        }
      }
      return out;
    },
  );

  app.post<{ Body: StartReproductionBody }>(
    '/api/reproductions',
    {
      schema: {
        body: requestSchema(startReproductionBodySchema),
        response: { 201: responseSchema(reproductionStartedSchema), ...errorResponses },
      },
    },
    async (request, reply) => {
      const quick = request.body.quick ?? false;
      const [wu, published] = await writeUp(request.body.folder, 400);
      // A busy run slot (a run here or in another kbench process) is a 409 from startSeries.
      const planned = await plan(wu, published, quick);
      const skipped = planned.flatMap((p) =>
        p.notRun.map((reason) => ({ scenario: p.experiment.scenario, reason })),
      );
      const now = new Date();
      let tag = reproductionTag(wu.folder, now, quick);
      for (let n = 2; started.has(tag); n++) tag = reproductionTag(wu.folder, now, quick, `.${n}`);
      const items: SeriesItem[] = planned.flatMap((p) =>
        // The reproduction's tag is its series too; each run carries its sweep value as a field.
        p.runnable.map(({ plan, value }) => ({
          scenario: plan,
          source: p.source,
          tags: [tag],
          series: tag,
          ...(value === undefined ? {} : { sweepValue: value }),
        })),
      );
      if (items.length === 0)
        throw new HttpError(
          400,
          `folder: nothing in ${wu.folder} can run here (${skipped.map((s) => `${s.scenario}: ${s.reason}`).join('; ')})`,
        );
      let result: Awaited<ReturnType<typeof app.runs.startSeries>>;
      try {
        result = await app.runs.startSeries(items, request.body.concurrent ? { concurrent: true } : {});
      } catch (err) {
        if (err instanceof ScenarioError) throw invalidScenario(err.issues);
        throw err;
      }
      started.set(tag, { series: result.series, each: items.map((i) => estimateRunSeconds(i.scenario)) });
      const body: ReproductionStarted = {
        folder: wu.folder,
        tag,
        quick,
        total: items.length,
        firstRunId: result.first.id,
        skipped,
      };
      return reply.code(201).send(body);
    },
  );

  app.get<{ Querystring: ReproductionResultsQuery }>(
    '/api/reproductions/results',
    {
      schema: {
        querystring: requestSchema(reproductionResultsQuerySchema),
        response: { 200: responseSchema(reproductionResultsSchema), ...errorResponses },
      },
    },
    async (request): Promise<ReproductionResults> => {
      const [wu, published] = await writeUp(request.query.folder, 404);
      const base = info(wu, published);
      const prefix = `reproduce:${wu.folder}:`;
      // A reproduction's runs share its series, `reproduce:<folder>:<time>[-quick]`.
      const byTag = new Map<string, RunListItem[]>();
      for (const run of await app.history.listRuns({ seriesPrefix: prefix })) {
        const t = run.series as string;
        if (parseReproductionTag(t)?.folder === wu.folder) byTag.set(t, [...(byTag.get(t) ?? []), run]);
      }
      const reproductions = [...byTag.entries()]
        .map(([t, runs]) => ({
          tag: t,
          quick: parseReproductionTag(t)?.quick ?? false,
          startedAt: runs.map((r) => r.startedAt).sort()[0] as string,
          runs: runs.length,
        }))
        .sort((a, b) => b.startedAt.localeCompare(a.startedAt) || b.tag.localeCompare(a.tag));
      const tag = request.query.tag ?? reproductions[0]?.tag ?? null;
      if (tag !== null && !byTag.has(tag))
        throw new HttpError(404, `no reproduction ${JSON.stringify(tag)} of ${wu.folder}`);
      const quick = tag === null ? false : (parseReproductionTag(tag)?.quick ?? false);
      const runs = [...(tag === null ? [] : (byTag.get(tag) ?? []))].sort((a, b) =>
        a.startedAt.localeCompare(b.startedAt),
      );
      const own = tag === null ? undefined : started.get(tag);
      const planned = await plan(wu, published, quick);
      const running = runs.find((r) => r.status === 'running');
      const elapsed = running ? (Date.now() - Date.parse(running.startedAt)) / 1000 : null;
      let progress: ReproductionProgress | null = null;
      if (own) {
        const { series, each } = own;
        progress = {
          total: series.total,
          started: series.ids.length,
          current: series.finished ? null : (series.ids.at(-1) ?? null),
          finished: series.finished,
          error: series.error,
          owner: 'this workbench',
          estimatedSeconds: total(each),
          remainingSeconds: series.finished ? 0 : remainingSeconds(each, series.ids.length, elapsed),
        };
      } else if (tag !== null) {
        // Run by another kbench process (the CLI): under way while the run slot names it.
        const each = planned.flatMap((p) => p.runnable).map((r) => estimateRunSeconds(r.plan));
        const holder = cliReproduction(runs, running?.id, each.length);
        if (holder) {
          progress = {
            total: each.length,
            started: runs.length,
            current: running?.id ?? null,
            finished: false,
            error: null,
            owner: describeHolder(holder),
            estimatedSeconds: total(each),
            remainingSeconds: remainingSeconds(each, runs.length, elapsed),
          };
        }
      }

      const perExperiment = await Promise.all(
        planned.map(async (p) => {
          const file = p.experiment.scenario;
          const own = runs.filter((r) => r.source === p.source || r.source?.endsWith(`/${file}`));
          const overTime = p.experiment.checks.some((c) => c.kind === 'expect' && c.across === 'time');
          const knob = p.scenario?.sweep?.knob;
          return Promise.all(
            own.map(async (r) => {
              const sweepValue = knob ? (r.sweepValue ?? null) : null;
              const samples = overTime && r.status !== 'running' ? await app.history.getSamples(r.id) : [];
              const m = measuredRun(p.experiment, r, sweepValue, samples);
              const run: ReproductionRun = {
                id: r.id,
                name: r.name,
                status: r.status,
                sweepValue,
                error: r.error,
                figures: Object.fromEntries(p.experiment.figures.map((f) => [f, metricValue(r.summary, f)])),
              };
              return { run, measured: m };
            }),
          );
        }),
      );
      // In run order within each experiment, so a rule across a sweep follows the sweep's values.
      const verdicts = judge(
        planned.map((p) => p.experiment),
        perExperiment.flat().map((x) => x.measured),
      );
      return {
        folder: base.folder,
        title: base.title,
        url: base.url,
        setup: base.setup,
        tag,
        quick,
        startedAt: runs[0]?.startedAt ?? null,
        progress,
        reproductions,
        experiments: base.experiments.map((e, i) => {
          const p = planned[i] as PlannedExperiment;
          return {
            ...e,
            notRun: p.notRun,
            runs: (perExperiment[i] ?? []).map((x) => x.run),
            verdicts: verdicts[i] ?? [],
          };
        }),
        estimate: await estimateOf(wu, published, { quick, plans: planned }),
      };
    },
  );
}
