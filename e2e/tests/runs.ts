// What several specs do first: store a short real run, started through the API as the Run button does.
import { expect, type Page } from '@playwright/test';

/** Starts a run of this scenario object and waits until it is stored as completed; its id. */
export async function completedRun(page: Page, scenario: Record<string, unknown>): Promise<string> {
  const res = await page.request.post('/api/runs', { data: { scenario } });
  expect(res.status()).toBe(201);
  const { id } = (await res.json()) as { id: string };
  await expect
    .poll(
      async () => ((await (await page.request.get(`/api/runs/${id}`)).json()) as { status: string }).status,
      {
        timeout: 60_000,
      },
    )
    .toBe('completed');
  return id;
}
