// A hash router: #/ scenarios, #/history, #/runs/<id>, #/runs/<id>/live, #/compare/<id>,<id>,
// #/reproductions/<folder>[/<tag>], #/trends/<scenario>[/<target>[/<sweep value>]] (URI-encoded).
import { useEffect, useState } from 'react';

export type Route =
  | { page: 'scenarios' }
  | { page: 'history' }
  | { page: 'run'; id: string }
  | { page: 'live'; id: string }
  | { page: 'compare'; ids: string[] }
  | { page: 'compose'; from: string | null }
  | { page: 'reproduction'; folder: string; tag: string | null }
  | { page: 'trend'; scenario: string; target: string | null; sweepValue: string | null }
  | { page: 'not-found'; path: string };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '') || '/';
  if (path === '/' || path === '/scenarios') return { page: 'scenarios' };
  if (path === '/history') return { page: 'history' };
  const live = /^\/runs\/([A-Za-z0-9_-]+)\/live$/.exec(path);
  if (live?.[1]) return { page: 'live', id: live[1] };
  const compose = /^\/compose(?:\/(.+))?$/.exec(path);
  if (compose) return { page: 'compose', from: compose[1] ? decodeURIComponent(compose[1]) : null };
  const compare = /^\/compare\/([A-Za-z0-9_,-]+)$/.exec(path);
  if (compare?.[1]) return { page: 'compare', ids: compare[1].split(',').filter(Boolean) };
  const reproduction = /^\/reproductions\/([^/]+)(?:\/([^/]+))?$/.exec(path);
  if (reproduction?.[1])
    return {
      page: 'reproduction',
      folder: decodeURIComponent(reproduction[1]),
      tag: reproduction[2] ? decodeURIComponent(reproduction[2]) : null,
    };
  const trend = /^\/trends\/([^/]+)(?:\/([^/]+)(?:\/([^/]+))?)?$/.exec(path);
  if (trend?.[1])
    return {
      page: 'trend',
      scenario: decodeURIComponent(trend[1]),
      target: trend[2] ? decodeURIComponent(trend[2]) : null,
      sweepValue: trend[3] ? decodeURIComponent(trend[3]) : null,
    };
  const run = /^\/runs\/([A-Za-z0-9_-]+)$/.exec(path);
  if (run?.[1]) return { page: 'run', id: run[1] };
  return { page: 'not-found', path };
}

export const href = {
  scenarios: '#/',
  history: '#/history',
  run: (id: string) => `#/runs/${id}`,
  live: (id: string) => `#/runs/${id}/live`,
  compare: (ids: string[]) => `#/compare/${ids.join(',')}`,
  reproduction: (folder: string, tag?: string | null) =>
    `#/reproductions/${encodeURIComponent(folder)}${tag ? `/${encodeURIComponent(tag)}` : ''}`,
  /** A scenario's trend on a target (the one it ran on, when it ran on one only), or a sweep point's. */
  trend: (scenario: string, target?: string | null, sweepValue?: string | null) =>
    `#/trends/${[scenario, ...(target ? [target] : []), ...(target && sweepValue ? [sweepValue] : [])]
      .map(encodeURIComponent)
      .join('/')}`,
  compose: (from?: string) => (from ? `#/compose/${encodeURIComponent(from)}` : '#/compose'),
};

export function navigate(to: string): void {
  window.location.hash = to.replace(/^#/, '');
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
