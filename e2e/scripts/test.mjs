// `npm test` for e2e: the spec files split into two groups of about equal time, each run by its own
// Playwright process, one worker each, against its own `kbench serve` (its own port and KBENCH_HOME),
// side by side. A spec's tests share one server and one history, so a group is a set of whole files.
// With arguments (`npm test -- tests/composer.spec.ts`), one plain `playwright test` runs them.
//
// KBENCH_E2E_GROUPS sets the number of groups (default 2; 1 runs everything in one process).
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const playwright = createRequire(import.meta.url).resolve('@playwright/test/cli');

// Seconds each spec file took with one worker in a fresh-clone CI (2026-11-28); a new file counts as
// the median until it is listed. Only the balance of the two groups depends on these.
const SECONDS = {
  'run-page.spec.ts': 38,
  'reproduction.spec.ts': 31,
  'run-slot.spec.ts': 23,
  'chart-exports.spec.ts': 18,
  'quickstart.spec.ts': 18,
  'history.spec.ts': 13,
  'composer.spec.ts': 12,
  'trends.spec.ts': 12,
  'targets.spec.ts': 12,
  'compare-sweep.spec.ts': 11,
  'composer-faults.spec.ts': 9,
  'cluster-metrics.spec.ts': 7,
  'sweep-live.spec.ts': 7,
  'compare.spec.ts': 7,
  'record-check.spec.ts': 5,
  'agents.spec.ts': 2,
  'test-runner.spec.ts': 2,
};
const MEDIAN = 11;

/** Longest first, each file to the group with the least time so far. */
function split(files, groups) {
  const out = Array.from({ length: groups }, () => ({ files: [], seconds: 0 }));
  const weight = (f) => SECONDS[f] ?? MEDIAN;
  for (const f of [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    const least = out.reduce((min, g) => (g.seconds < min.seconds ? g : min));
    least.files.push(f);
    least.seconds += weight(f);
  }
  return out.filter((g) => g.files.length > 0);
}

function run(args, env, prefix) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [playwright, 'test', ...args], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    for (const [from, to] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ]) {
      let rest = '';
      from.on('data', (chunk) => {
        const lines = (rest + chunk.toString()).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) to.write(`${prefix}${line}\n`);
      });
      from.on('end', () => {
        if (rest) to.write(`${prefix}${rest}\n`);
      });
    }
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const children = [];
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
  });

const args = process.argv.slice(2);
const groups = Number(process.env.KBENCH_E2E_GROUPS ?? 2);
if (!Number.isInteger(groups) || groups < 1 || groups > 4) {
  console.error(
    `KBENCH_E2E_GROUPS must be a whole number from 1 to 4 (got ${process.env.KBENCH_E2E_GROUPS})`,
  );
  process.exit(2);
}
if (args.length > 0 || groups === 1) {
  process.exit(await run(args, process.env, ''));
}

const specs = readdirSync(join(root, 'tests')).filter((f) => f.endsWith('.spec.ts'));
const basePort = Number(process.env.KBENCH_E2E_PORT ?? 7431);
const planned = split(specs, groups);
const started = Date.now();
const codes = await Promise.all(
  planned.map((g, i) => {
    const env = { ...process.env, KBENCH_E2E_PORT: String(basePort + i), KBENCH_E2E_GROUP: String(i + 1) };
    // Each group makes its own history (playwright.config.ts), so their runs do not meet in one slot.
    delete env.KBENCH_E2E_HOME;
    console.log(`e2e group ${i + 1}: ${g.files.join(' ')}`);
    return run(
      g.files.map((f) => join('tests', f)),
      env,
      `[${i + 1}] `,
    );
  }),
);
const took = Math.round((Date.now() - started) / 1000);
for (const [i, code] of codes.entries())
  console.log(`e2e group ${i + 1}: ${code === 0 ? 'passed' : `failed (exit ${code})`}`);
console.log(`e2e: ${planned.length} groups side by side in ${took} s`);
process.exit(codes.some((c) => c !== 0) ? 1 : 0);
