// One run at a time on a machine (issue 14), between the workbench and a `kbench run` in the same
// KBENCH_HOME: the web's Run is refused while the CLI run goes, Run alongside it marks both runs,
// and Stop on the CLI run's live page stops the CLI process as Ctrl-C does.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const KBENCH = fileURLToPath(new URL('../../apps/cli/dist/main.js', import.meta.url));

interface CliRun {
  id: string;
  child: ChildProcess;
  exited: Promise<number | null>;
}

/** `kbench run` as a user runs it in a terminal beside the workbench (no TTY, the workbench's home). */
function cliRun(args: string[]): Promise<CliRun> {
  const child = spawn(process.execPath, [KBENCH, 'run', ...args], {
    cwd: REPO,
    env: { ...process.env, KBENCH_HOME: process.env.KBENCH_E2E_HOME },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  let stderr = '';
  return new Promise((done, fail) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const id = /run ([0-9a-f]{12}): /.exec(stderr)?.[1];
      if (id) done({ id, child, exited });
    });
    void exited.then((code) => fail(new Error(`kbench run exited ${code} before starting:\n${stderr}`)));
  });
}

let cli: CliRun | undefined;
test.afterEach(async () => {
  // Whatever happened, leave no run going for the next test.
  if (cli && cli.child.exitCode === null) {
    cli.child.kill('SIGINT');
    await cli.exited;
  }
  cli = undefined;
});

test('a run started beside a CLI run warns on its pages, in the history and in the comparison', async ({
  page,
}) => {
  cli = await cliRun(['scenarios/quickstart.yaml', '--set', 'duration=60s']);
  await page.goto('/');
  const quickstart = page.locator('[data-testid=scenario][data-path="quickstart.yaml"]');

  // Run is refused, naming the CLI run; the notice offers to run alongside it.
  await quickstart.getByTestId('run-scenario').click();
  await expect(page.getByTestId('error')).toContainText(
    `another run is going: ${cli.id} quickstart (kbench run, pid ${cli.child.pid}, since`,
  );
  await expect(page.getByTestId('running-notice')).toContainText('quickstart');
  await page.getByTestId('run-alongside').check();
  await quickstart.getByTestId('run-scenario').click();
  await expect(page).toHaveURL(/#\/runs\/[0-9a-f]+\/live$/);
  const webId = /#\/runs\/([0-9a-f]+)\/live$/.exec(page.url())?.[1] as string;

  // The live page warns at once, naming the CLI run.
  const warning = page.getByTestId('concurrent-warning');
  await expect(warning).toContainText(`ran at the same time as run ${cli.id} on this machine`);
  await expect(page.getByTestId('run-status')).toHaveText('completed', { timeout: 90_000 });
  await expect(warning).toContainText(cli.id);

  // So does its run page, and the CLI run's page names the web run.
  await page.goto(`/#/runs/${webId}`);
  await expect(page.getByTestId('run-page')).toBeVisible();
  await expect(page.getByTestId('concurrent-warning')).toContainText(`ran at the same time as run ${cli.id}`);
  await page.goto(`/#/runs/${cli.id}/live`);
  await expect(page.getByTestId('concurrent-warning')).toContainText(`ran at the same time as run ${webId}`);

  // The history marks both runs; the comparison warns for each.
  await page.getByTestId('nav-history').click();
  for (const id of [webId, cli.id])
    await expect(
      page.locator(`[data-testid=history-row][data-run-id="${id}"] [data-testid=concurrent-mark]`),
    ).toBeVisible();
  await page.goto(`/#/compare/${webId},${cli.id}`);
  await expect(page.getByTestId('compare-page')).toBeVisible();
  await expect(page.getByTestId('concurrent-warning')).toHaveCount(2);
});

test('Stop on the live page of a run started by the CLI stops the CLI process cleanly', async ({ page }) => {
  cli = await cliRun(['scenarios/quickstart.yaml', '--set', 'duration=120s']);
  await page.goto(`/#/runs/${cli.id}/live`);
  await expect(page.getByTestId('live-page')).toBeVisible();
  await page.getByTestId('stop-run').click();
  // The CLI stops as on Ctrl-C: it exits 0 and stores the run as stopped, which the page shows.
  expect(await cli.exited).toBe(0);
  await expect(page.getByTestId('run-status')).toHaveText('stopped', { timeout: 30_000 });
  await expect(page.getByTestId('stop-run')).toHaveCount(0);
  const record = (await (await page.request.get(`/api/runs/${cli.id}`)).json()) as { status: string };
  expect(record.status).toBe('stopped');
});
