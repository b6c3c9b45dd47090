import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/** The checkout's scenarios/ folder (the CLI lives at apps/cli/dist), or KBENCH_SCENARIOS. */
export function defaultScenariosDir(): string {
  if (process.env.KBENCH_SCENARIOS) return path.resolve(process.env.KBENCH_SCENARIOS);
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'scenarios');
    if (existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  return path.resolve('scenarios');
}

/** The built web app, if it has been built. */
export function webDistDir(): string | undefined {
  try {
    const dist = path.join(path.dirname(require.resolve('@kbench/web/package.json')), 'dist');
    return existsSync(path.join(dist, 'index.html')) ? dist : undefined;
  } catch {
    return undefined;
  }
}
