// The server's REST API, typed with the shapes from @kbench/schema (the server's route schemas are
// generated from the same declarations). Type-only imports: no schema code comes into the bundle.
import type {
  ErrorBody,
  ReproductionInfo,
  ReproductionResults,
  ReproductionStarted,
  RunChange,
  RunHeatmaps,
  RunListItem,
  RunOwner,
  RunQuery,
  RunRecord,
  RunStatus,
  Sample,
  SaveScenarioBody,
  ScenarioEntry,
  ScenarioFile,
  ScenarioIssue,
  StartReproductionBody,
  StartRunBody,
  SweepInfo,
  TargetProfile,
  Trend,
  TrendQuery,
} from '@kbench/schema';

export type {
  Progress,
  ReproductionInfo,
  ReproductionResults,
  ReproductionStarted,
  RunListItem,
  RunOwner,
  RunRecord,
  RunStatus,
  Sample,
  Scenario,
  ScenarioEntry,
  ScenarioFile,
  ScenarioOutline,
  SweepInfo,
  TargetProfile,
  Trend,
  TrendSeries,
} from '@kbench/schema';

/** A problem with one field of a request, by its path. */
export type Issue = ScenarioIssue;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly issues: Issue[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

async function request<T>(method: string, url: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.headers = { ...init.headers, 'content-type': 'application/json' };
    init.body = JSON.stringify(body);
  }
  const res = await fetch(url, init);
  const text = await res.text();
  const data: unknown = text ? JSON.parse(text) : null;
  if (!res.ok) {
    const err = (data ?? {}) as Partial<ErrorBody>;
    throw new ApiError(res.status, err.error ?? `${res.status} ${res.statusText}`, err.issues ?? []);
  }
  return data as T;
}

const enc = encodeURIComponent;

/** A trend's query string: the scenario, and the target and sweep value where given. */
function trendParams(query: TrendQuery): string {
  const entries = Object.entries(query).filter((entry): entry is [string, string] => Boolean(entry[1]));
  return new URLSearchParams(entries).toString();
}

export const api = {
  scenarios: () => request<ScenarioEntry[]>('GET', '/api/scenarios'),
  scenario: (path: string) =>
    request<ScenarioFile>('GET', `/api/scenarios/${path.split('/').map(enc).join('/')}`),
  saveScenario: (body: SaveScenarioBody) => request<{ path: string }>('POST', '/api/scenarios', body),
  startRun: (body: StartRunBody) => request<{ id: string }>('POST', '/api/runs', body),
  runs: (filter: Omit<RunQuery, 'status'> & { status?: RunStatus | '' } = {}) => {
    const q = new URLSearchParams();
    if (filter.status) q.set('status', filter.status);
    if (filter.search) q.set('search', filter.search);
    if (filter.limit) q.set('limit', String(filter.limit));
    const qs = q.toString();
    return request<RunListItem[]>('GET', `/api/runs${qs ? `?${qs}` : ''}`);
  },
  /** Changes whenever the history does, whichever process wrote it: cheap to poll. */
  runsVersion: () => request<{ version: string }>('GET', '/api/runs/version'),
  run: (id: string) => request<RunRecord>('GET', `/api/runs/${enc(id)}`),
  samples: (id: string) => request<Sample[]>('GET', `/api/runs/${enc(id)}/samples`),
  sweep: (id: string) => request<SweepInfo>('GET', `/api/runs/${enc(id)}/sweep`),
  stopRun: (id: string) => request<{ id: string }>('POST', `/api/runs/${enc(id)}/stop`),
  owner: (id: string) => request<RunOwner>('GET', `/api/runs/${enc(id)}/owner`),
  updateRun: (id: string, change: RunChange) => request<RunRecord>('PATCH', `/api/runs/${enc(id)}`, change),
  deleteRun: (id: string) => request<{ deleted: string }>('DELETE', `/api/runs/${enc(id)}`),
  /** The write-up folders (those with a published.yaml). */
  reproductions: () => request<ReproductionInfo[]>('GET', '/api/reproductions'),
  startReproduction: (body: StartReproductionBody) =>
    request<ReproductionStarted>('POST', '/api/reproductions', body),
  /** A folder's latest reproduction, or the one with this tag, with the verdicts of its rules. */
  reproductionResults: (folder: string, tag?: string | null) =>
    request<ReproductionResults>(
      'GET',
      `/api/reproductions/results?folder=${enc(folder)}${tag ? `&tag=${enc(tag)}` : ''}`,
    ),
  /** Target profiles, secrets masked by the server. */
  profiles: () => request<TargetProfile[]>('GET', '/api/profiles'),
  /** A scenario's completed runs on a target, each headline figure with its change points and best run. */
  trend: (query: TrendQuery) => request<Trend>('GET', `/api/trends?${trendParams(query)}`),
  /** A trend's chart, drawn by the server as the Trends page draws it. */
  trendChartUrl: (chartId: string, format: 'svg' | 'png', query: TrendQuery) =>
    `/api/trends/charts/${enc(chartId)}.${format}?${trendParams(query)}`,
  eventsUrl: (id: string) => `/api/runs/${enc(id)}/events`,
  csvUrl: (id: string) => `/api/runs/${enc(id)}/samples.csv`,
  /** A run's latency histograms as a heatmap's input, each side (null: none stored). */
  heatmap: (id: string) => request<RunHeatmaps>('GET', `/api/runs/${enc(id)}/heatmap`),
  /** A run's per-sample histograms as an HdrHistogram interval log, and as raw JSON. */
  hlogUrl: (id: string) => `/api/runs/${enc(id)}/export.hlog`,
  histogramsJsonUrl: (id: string) => `/api/runs/${enc(id)}/histograms.json`,
  /** A chart of one run (one id) or a comparison (several), drawn by the server as the page draws it. */
  chartUrl: (chartId: string, format: 'svg' | 'png', ids: string[]) =>
    `/api/charts/${enc(chartId)}.${format}?ids=${ids.map(enc).join(',')}`,
};
