// The composer's faults timeline: rows in the form, kept in sync with the YAML, with errors by row.
import { expect, test } from '@playwright/test';

test('edit faults row by row, in sync with the YAML', async ({ page }) => {
  await page.goto('/#/compose');
  await expect(page.getByTestId('composer-page')).toBeVisible();
  await page.getByText('all knobs').click();
  const yaml = page.getByTestId('composer-yaml');

  // A row added in the form shows up in the YAML.
  await page.getByTestId('fault-add').click();
  const row = page.getByTestId('fault-0');
  await expect(row.getByTestId('fault-0-for').locator('input')).toBeDisabled();
  await row.getByTestId('fault-0-action').locator('select').selectOption('pause');
  await row.getByTestId('fault-0-node').locator('input').fill('1');
  await row.getByTestId('fault-0-at').locator('input').fill('1s');
  await row.getByTestId('fault-0-for').locator('input').fill('500ms');
  await expect(yaml).toHaveValue(/faults:\n\s+- at: 1s\n\s+action: pause\n\s+node: 1\n\s+for: 500ms/);
  await expect(page.getByTestId('composer-issues')).toHaveCount(0);

  // A pause typed in the YAML without for gets a row and the error beside its for.
  const text = await yaml.inputValue();
  await yaml.fill(`${text.trimEnd()}\n  - at: 2s\n    action: pause\n    node: 2\n`);
  await expect(page.getByTestId('fault-1-node').locator('input')).toHaveValue('2');
  await expect(page.getByTestId('fault-1-for').getByTestId('field-error')).toContainText(
    'faults[1].for: a pause needs for',
  );
  await expect(page.getByTestId('composer-launch')).toBeDisabled();

  // Removing the row removes it from the YAML and clears the error.
  await page.getByTestId('fault-1-remove').click();
  await expect(yaml).not.toHaveValue(/at: 2s/);
  await expect(page.getByTestId('composer-issues')).toHaveCount(0);
});

for (const width of [1280, 800]) {
  test(`at ${width} px a fault row stays inside its panel, under headers aligned with its inputs`, async ({
    page,
  }) => {
    await page.setViewportSize({ width, height: 900 });
    await page.goto('/#/compose');
    await page.getByTestId('composer-reset').click();
    await page.getByText('all knobs').click();
    await page.getByTestId('fault-add').click();

    const panel = await page.getByTestId('composer-group-scenario').boundingBox();
    const remove = await page.getByTestId('fault-0-remove').boundingBox();
    if (!panel || !remove) throw new Error('the panel and the remove button are laid out');
    expect.soft(remove.x).toBeGreaterThanOrEqual(panel.x);
    expect.soft(remove.x + remove.width).toBeLessThanOrEqual(panel.x + panel.width);

    for (const key of ['at', 'action', 'node', 'for']) {
      const head = await page.getByTestId(`fault-head-${key}`).boundingBox();
      const input = await page.getByTestId(`fault-0-${key}`).locator('input, select').boundingBox();
      if (!head || !input) throw new Error(`the ${key} header and input are laid out`);
      expect
        .soft(Math.abs(head.x - input.x), `${key}: header left edge against the input's`)
        .toBeLessThanOrEqual(1);
      expect
        .soft(
          Math.abs(head.x + head.width - (input.x + input.width)),
          `${key}: header right edge against the input's`,
        )
        .toBeLessThanOrEqual(1);
    }
  });
}

test("a new fault falls in the middle of the scenario's measured phase", async ({ page }) => {
  await page.goto('/#/compose/quickstart.yaml');
  await page.getByTestId('composer-reset').click();
  await expect(page.getByTestId('composer-yaml')).toHaveValue(/duration: 10s\n/);
  await page.getByText('all knobs').click();
  await page.getByTestId('fault-add').click();
  // quickstart: 10 s with 2 s of warm-up, so the measured phase runs from 2 s to 10 s.
  await expect(page.getByTestId('fault-0-at').locator('input')).toHaveValue('6s');
  await expect(page.getByTestId('composer-yaml')).toHaveValue(/faults:\n\s+- at: 6s\n/);
});

test("each action's row takes its own fields: slow-disk's delay, a command's run, none for a rolling restart", async ({
  page,
}) => {
  await page.goto('/#/compose');
  await page.getByTestId('composer-reset').click();
  await page.getByText('all knobs').click();
  const yaml = page.getByTestId('composer-yaml');
  await page.getByTestId('fault-add').click();
  const row = page.getByTestId('fault-0');

  // slow-disk: a node, for until a heal, and a delay it needs (the schema's message until typed).
  await row.getByTestId('fault-0-action').locator('select').selectOption('slow-disk');
  await expect(row.getByTestId('fault-0-for').locator('input')).toBeEnabled();
  await expect(row.getByTestId('fault-0-delay').getByTestId('field-error')).toContainText(
    'faults[0].delay: a slow-disk needs delay: the time added to each fdatasync (e.g. 5ms)',
  );
  await expect(page.getByTestId('composer-launch')).toBeDisabled();
  await row.getByTestId('fault-0-delay').locator('input').fill('5ms');
  await expect(yaml).toHaveValue(/action: slow-disk\n\s+node: 1\n\s+delay: 5ms/);
  await expect(page.getByTestId('composer-issues')).toHaveCount(0);

  // isolate: from peers or clients.
  await row.getByTestId('fault-0-action').locator('select').selectOption('isolate');
  await expect(yaml).not.toHaveValue(/delay:/);
  await row.getByTestId('fault-0-from').locator('select').selectOption('clients');
  await expect(yaml).toHaveValue(/action: isolate\n\s+node: 1\n\s+from: clients/);

  // command: no node; its run and timeout, the timeout checked against its range.
  await row.getByTestId('fault-0-action').locator('select').selectOption('command');
  await expect(yaml).not.toHaveValue(/node: 1/);
  await expect(row.getByTestId('fault-0-node').locator('input')).toBeDisabled();
  await expect(row.getByTestId('fault-0-run').getByTestId('field-error')).toContainText(
    'faults[0].run: a command fault needs run',
  );
  await row.getByTestId('fault-0-run').locator('input').fill('echo drill');
  await row.getByTestId('fault-0-timeout').locator('input').fill('2h');
  await expect(row.getByTestId('fault-0-timeout').getByTestId('field-error')).toContainText(
    'faults[0].timeout: must be from 100ms to 60m (got "2h")',
  );
  await row.getByTestId('fault-0-timeout').locator('input').fill('10s');
  await expect(yaml).toHaveValue(/action: command\n\s+run: echo drill\n\s+timeout: 10s/);
  await expect(page.getByTestId('composer-issues')).toHaveCount(0);

  // rolling-restart: the whole cluster, no fields of its own.
  await row.getByTestId('fault-0-action').locator('select').selectOption('rolling-restart');
  await expect(row.getByTestId('fault-0-extra')).toHaveCount(0);
  await expect(yaml).toHaveValue(/action: rolling-restart\n/);
  await expect(yaml).not.toHaveValue(/run: echo/);
  await expect(page.getByTestId('composer-issues')).toHaveCount(0);
});
