// A new user's path through the composer: open a library scenario, change knobs in the form and in
// the YAML, meet a validation error, launch, watch it finish, and save the scenario as a file.
import { expect, test } from '@playwright/test';

test('compose from a library scenario, validate, launch and save', async ({ page }) => {
  await page.goto('/');
  await page
    .locator('[data-testid="scenario"][data-path="quickstart.yaml"]')
    .getByTestId('edit-scenario')
    .click();
  await expect(page.getByTestId('composer-page')).toBeVisible();
  const yaml = page.getByTestId('composer-yaml');
  await expect(yaml).toHaveValue(/name: quickstart/);

  // Two knobs changed in the form show up in the YAML.
  await page.getByTestId('field-duration').locator('input').fill('4s');
  await page.getByTestId('field-warmup').locator('input').fill('1s');
  await expect(yaml).toHaveValue(/duration: 4s/);
  await expect(yaml).toHaveValue(/warmup: 1s/);

  // A bad value gets the CLI's message, by field, and Launch waits until it is fixed.
  const partitions = page.getByTestId('field-topics.partitions').locator('input');
  await partitions.fill('0');
  await expect(page.getByTestId('field-topics.partitions').getByTestId('field-error')).toHaveText(
    'topics.partitions: must be a whole number from 1 to 10000 (got 0)',
  );
  await expect(page.getByTestId('composer-launch')).toBeDisabled();
  await partitions.fill('2');
  await expect(page.getByTestId('composer-issues')).toHaveCount(0);

  // Editing the YAML moves the form.
  const text = await yaml.inputValue();
  await yaml.fill(text.replace(/acks: 1/, 'acks: all'));
  await expect(page.getByTestId('field-producers.acks').locator('select')).toHaveValue('all');

  await page.getByTestId('composer-launch').click();
  await expect(page).toHaveURL(/#\/runs\/[a-f0-9]+\/live$/);
  await expect(page.getByTestId('run-status')).toHaveText('completed', { timeout: 60_000 });

  // Back in the composer, the draft is still there to save.
  await page.goBack();
  await expect(page.getByTestId('composer-yaml')).toHaveValue(/acks: all/);
  await page.getByTestId('composer-file').fill('e2e-composed');
  await page.getByTestId('composer-save').click();
  await expect(page.getByTestId('composer-saved')).toContainText('user/e2e-composed.yaml');
  // Reset discards the draft and reloads the file: the saved one, since the save.
  const saved = await yaml.inputValue();
  await yaml.fill(saved.replace(/duration: 4s/, 'duration: 7s'));
  await page.getByTestId('composer-reset').click();
  await expect(page.getByTestId('composer-yaml')).toHaveValue(/duration: 4s/);
  await page.getByTestId('nav-scenarios').click();
  await expect(page.locator('[data-testid="scenario"][data-path="user/e2e-composed.yaml"]')).toBeVisible();
});

test('a YAML parse error replaces the errors of the last YAML that parsed', async ({ page }) => {
  await page.goto('/#/compose');
  await page.getByTestId('composer-reset').click();
  await page.getByTestId('field-topics.partitions').locator('input').fill('0');
  const issues = page.getByTestId('composer-issues');
  await expect(issues).toContainText('topics.partitions');

  const yaml = page.getByTestId('composer-yaml');
  await yaml.fill(`${await yaml.inputValue()}producers: [\n`);
  await expect(page.getByTestId('yaml-error')).toBeVisible();
  const parseError = (await page.getByTestId('yaml-error').textContent()) ?? '';
  await expect(issues).toContainText(parseError.trim());
  await expect(issues).not.toContainText('topics.partitions');
  await expect(page.getByTestId('field-topics.partitions').getByTestId('field-error')).toHaveCount(0);
});

test('after Save as, the title and the address name the new file', async ({ page }) => {
  await page.goto('/#/compose/quickstart.yaml');
  await expect(page.getByTestId('composer-title')).toHaveText('Composer: quickstart.yaml');
  await page.getByTestId('composer-file').fill('e2e-saved-as');
  await page.getByTestId('composer-save').click();
  await expect(page.getByTestId('composer-saved')).toContainText('user/e2e-saved-as.yaml');
  await expect(page.getByTestId('composer-title')).toHaveText('Composer: user/e2e-saved-as.yaml');
  await page.reload();
  await expect(page.getByTestId('composer-title')).toHaveText('Composer: user/e2e-saved-as.yaml');
  await expect(page.getByTestId('composer-yaml')).toHaveValue(/name: quickstart/);
});

test('while a file loads, the composer offers nothing to save or launch under its name', async ({ page }) => {
  // The server's answer for the file is held back (then passed on as it was): a slow connection.
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  await page.route('**/api/scenarios/quickstart.yaml', async (route) => {
    await held;
    await route.continue();
  });
  await page.goto('/#/compose/quickstart.yaml');
  await expect(page.getByTestId('composer-title')).toHaveText('Composer: quickstart.yaml');
  await expect(page.getByTestId('composer-save')).toBeDisabled();
  await expect(page.getByTestId('composer-launch')).toBeDisabled();
  await expect(page.getByTestId('composer-yaml')).toHaveValue('');
  release();
  await expect(page.getByTestId('composer-yaml')).toHaveValue(/name: quickstart/);
  await expect(page.getByTestId('composer-save')).toBeEnabled();
  await expect(page.getByTestId('composer-launch')).toBeEnabled();
});
