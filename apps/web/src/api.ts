// The server's REST API, typed with the shapes from @kbench/schema.
import type {
  ReproductionInfo,
  ReproductionResults,
  ReproductionStarted,
  RunListItem,
  RunRecord,
  RunStatus,
  Sample,
  Scenario,
  ScenarioEntry,
  ScenarioOutline,
  TargetProfile,
} from '@kbench/schema';

export type {
  ReproductionInfo,
  ReproductionResults,
  ReproductionStarted,
  RunListItem,
  RunRecord,
  RunStatus,
  Sample,
  Scenario,
  ScenarioEntry,
  ScenarioOutline,
  TargetProfile,
};

export interface Issue {
  path: string;
  message: string;
}

export interface ScenarioFile {
  path: string;
  text: string;
  scenario?: Scenario;
  issues?: Issue[];
}

/** Mirrors the engine's Progress events. */
export interface Progress {
  phase: 'starting' | 'setup' | 'preload' | 'search' | 'warmup' | 'measuring' | 'stopping' | 'done';
  elapsedMs: number;
  totalMs: number | null;
  producedRecords: number;
  consumedRecords: number;
  targetRecords: number | null;
}

/** Who runs a run and whether Stop reaches it (another process's run, stopped through the run slot). */
export interface RunOwner {
  id: string;
  owner: string | null;
  stoppable: boolean;
  reason: string | null;
}

export interface SweepInfo {
  knob: string;
  total: number;
  ids: string[];
  finished: boolean;
  /** Why the sweep ended before its last run, if it did. */
  error: string | null;
}

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
    const err = (data ?? {}) as { error?: string; issues?: Issue[] };
    throw new ApiError(res.status, err.error ?? `${res.status} ${res.statusText}`, err.issues ?? []);
  }
  return data as T;
}

const enc = encodeURIComponent;

export const api = {
  scenarios: () => request<ScenarioEntry[]>('GET', '/api/scenarios'),
  scenario: (path: string) =>
    request<ScenarioFile>('GET', `/api/scenarios/${path.split('/').map(enc).join('/')}`),
  saveScenario: (body: { file: string; yaml: string; overwrite?: boolean }) =>
    request<{ path: string }>('POST', '/api/scenarios', body),
  startRun: (body: {
    path?: string;
    yaml?: string;
    scenario?: object;
    set?: string[];
    /** Run even while another run is going on this machine (both are marked). */
    concurrent?: boolean;
  }) => request<{ id: string }>('POST', '/api/runs', body),
  runs: (filter: { status?: RunStatus | ''; search?: string; limit?: number } = {}) => {
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
  updateRun: (id: string, change: { tags?: string[]; notes?: string }) =>
    request<RunRecord>('PATCH', `/api/runs/${enc(id)}`, change),
  deleteRun: (id: string) => request<{ deleted: string }>('DELETE', `/api/runs/${enc(id)}`),
  /** The write-up folders (those with a published.yaml). */
  reproductions: () => request<ReproductionInfo[]>('GET', '/api/reproductions'),
  startReproduction: (body: { folder: string; quick?: boolean; concurrent?: boolean }) =>
    request<ReproductionStarted>('POST', '/api/reproductions', body),
  /** A folder's latest reproduction, or the one with this tag, with the verdicts of its rules. */
  reproductionResults: (folder: string, tag?: string | null) =>
    request<ReproductionResults>(
      'GET',
      `/api/reproductions/results?folder=${enc(folder)}${tag ? `&tag=${enc(tag)}` : ''}`,
    ),
  /** Target profiles, secrets masked by the server. */
  profiles: () => request<TargetProfile[]>('GET', '/api/profiles'),
  eventsUrl: (id: string) => `/api/runs/${enc(id)}/events`,
  csvUrl: (id: string) => `/api/runs/${enc(id)}/samples.csv`,
  /** A chart of one run (one id) or a comparison (several), drawn by the server as the page draws it. */
  chartUrl: (chartId: string, format: 'svg' | 'png', ids: string[]) =>
    `/api/charts/${enc(chartId)}.${format}?ids=${ids.map(enc).join(',')}`,
};
