// A run on the bundled target with a secured listener (cluster.security): the run page says how the
// listener was secured, in the environment and in the resolved scenario, and shows no secret.
import { expect, test } from '@playwright/test';

test('a bundled run over SASL_SSL shows its security on the run page', async ({ page }) => {
  await page.goto('/');
  const scenario = {
    name: 'secured bundled',
    driver: 'native',
    records: 2000,
    producers: { count: 1, messageSize: 100 },
    cluster: { security: { tls: true, sasl: 'scram-sha-512' } },
  };
  const res = await page.request.post('/api/runs', { data: { scenario } });
  expect(res.status()).toBe(201);
  const { id } = (await res.json()) as { id: string };
  await expect
    .poll(
      async () => ((await (await page.request.get(`/api/runs/${id}`)).json()) as { status: string }).status,
      {
        timeout: 90_000,
      },
    )
    .toBe('completed');

  await page.goto(`/#/runs/${id}`);
  const environment = page.getByTestId('environment');
  await expect(environment.getByRole('row', { name: /Security/ })).toContainText('SASL_SSL scram-sha-512');
  const yaml = page.getByTestId('scenario-yaml');
  await expect(yaml).toContainText('security:');
  await expect(yaml).toContainText('sasl: scram-sha-512');
  await expect(page.getByTestId('run-page')).not.toContainText('PRIVATE KEY');
});
