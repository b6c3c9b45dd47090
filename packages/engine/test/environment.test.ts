// Whether the machine hands free memory back to a hypervisor, read from sysfs: here from folders
// laid out as Linux lays out /sys, since this machine's own answer depends on where it runs.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { returnsFreeMemoryToHost } from '../src/environment.js';

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

/** A /sys with a balloon device of `features` (bit 0 first, as sysfs prints them) and a reporting order. */
async function sys(features: string | null, order: string | null): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'kbench-sys-'));
  roots.push(root);
  if (features !== null) {
    const device = path.join(root, 'bus/virtio/drivers/virtio_balloon/virtio0');
    await mkdir(device, { recursive: true });
    await writeFile(path.join(device, 'features'), `${features}\n`);
  }
  if (order !== null) {
    const params = path.join(root, 'module/page_reporting/parameters');
    await mkdir(params, { recursive: true });
    await writeFile(path.join(params, 'page_reporting_order'), `${order}\n`);
  }
  return root;
}

const REPORTING = '0110010100000000';
const NOT_REPORTING = '0110000100000000';

describe('returnsFreeMemoryToHost', () => {
  it('is true with a balloon that takes free page reports and reporting on', async () => {
    expect(returnsFreeMemoryToHost(await sys(REPORTING, '9'))).toBe(true);
  });

  it('is false when reporting is turned off, the balloon cannot take reports, or there is none', async () => {
    expect(returnsFreeMemoryToHost(await sys(REPORTING, '11'))).toBe(false);
    expect(returnsFreeMemoryToHost(await sys(NOT_REPORTING, '9'))).toBe(false);
    expect(returnsFreeMemoryToHost(await sys(null, '9'))).toBe(false);
    expect(returnsFreeMemoryToHost(await sys(REPORTING, null))).toBe(false);
  });
});
