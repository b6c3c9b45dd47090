// `kbench reproduce --all --quick`, as CI runs it: every published write-up in scenarios/, each
// scenario shortened, run against the real bundled broker, with a report per folder.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parsePublished } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, runKbench } from './helpers.js';

const SCENARIOS = path.join(REPO, 'scenarios');
const folders = readdirSync(SCENARIOS, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

let home: string;
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-reproduce-all-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('kbench reproduce --all --quick', () => {
  it(
    'runs every folder of scenarios/ and reports every experiment, with no run failing',
    async () => {
      const out = path.join(home, 'reports');
      const started = Date.now();
      const r = await runKbench(home, ['reproduce', '--all', '--quick', '--out', out], 20 * 60_000);
      process.stderr.write(`reproduce --all --quick took ${Math.round((Date.now() - started) / 1000)} s\n`);
      // A failed run names itself in the history before the exit code says only that one failed.
      const listed = await runKbench(home, ['list', '--json', '--limit', '1000']);
      const runs = JSON.parse(listed.stdout) as { name: string; status: string; error: string | null }[];
      expect(runs.filter((run) => run.status !== 'completed')).toEqual([]);
      expect(runs.length).toBeGreaterThan(60);
      expect(r.code, r.stderr.slice(-4000)).toBe(0);
      let experiments = 0;
      for (const folder of folders) {
        expect(r.stdout).toContain(path.join(out, `${folder}.md`));
        const report = await readFile(path.join(out, `${folder}.md`), 'utf8');
        expect(report).toContain('**Quick run**');
        expect(report).toMatch(/## Machine\n\n- \d+ cores/);
        // Every chart the report shows is an SVG file beside it.
        const charts = [...report.matchAll(/\]\(([^)]+\.svg)\)/g)].map((m) => m[1] as string);
        expect(charts.length).toBeGreaterThan(0);
        for (const chart of charts) expect(await readFile(path.join(out, chart), 'utf8')).toContain('<svg');
        const published = parsePublished(
          readFileSync(path.join(SCENARIOS, folder, 'published.yaml'), 'utf8'),
          `${folder}/published.yaml`,
        );
        for (const e of published.experiments) {
          experiments++;
          // Each experiment has its section, and in it either our measured runs or why it did not run.
          const start = report.indexOf(`Scenario: \`scenarios/${folder}/${e.scenario}\``);
          expect(start, `${folder}/${e.scenario} in the report`).toBeGreaterThan(0);
          const next = report.indexOf('\n## ', start);
          const section = report.slice(start, next < 0 ? undefined : next);
          expect(section).toMatch(/\| ours \| status \||Not run: /);
          expect(section).not.toMatch(/\| (failed|stopped)[:| ]/);
          // Every direction rule ends in a verdict, a quick run's marked indicative.
          const verdicts =
            section.match(/- Direction: .+: \*\*(indicative: (matches|does not match)|not checked)\*\*/g) ??
            [];
          expect(verdicts.length).toBe(e.checks.length);
        }
      }
      // The five write-ups held 30 experiments when this was written; more may come.
      expect(experiments).toBeGreaterThanOrEqual(30);
    },
    25 * 60_000,
  );
});
