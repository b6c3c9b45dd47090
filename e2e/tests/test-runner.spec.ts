// e2e's own `npm test` runner (scripts/test.mjs), spawned as a developer runs it: with arguments it
// hands them to one plain `playwright test`; a bad KBENCH_E2E_GROUPS is refused with exit 2.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';

const E2E = fileURLToPath(new URL('..', import.meta.url));
const SCRIPT = fileURLToPath(new URL('../scripts/test.mjs', import.meta.url));

test('npm test -- <spec> hands the spec to one playwright test; a bad KBENCH_E2E_GROUPS is exit 2', () => {
  const listed = spawnSync(process.execPath, [SCRIPT, '--list', 'tests/agents.spec.ts'], {
    cwd: E2E,
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(listed.status, listed.stderr).toBe(0);
  expect(listed.stdout).toContain('agents.spec.ts');
  expect(listed.stdout).toContain('Total: 1 test in 1 file');

  const refused = spawnSync(process.execPath, [SCRIPT], {
    env: { ...process.env, KBENCH_E2E_GROUPS: '9' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(refused.status).toBe(2);
  expect(refused.stderr).toContain('KBENCH_E2E_GROUPS must be a whole number from 1 to 4 (got 9)');
});
