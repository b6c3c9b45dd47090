// Which processes' CPU is a run's own: kbench's, and a broker of the target that listens on this
// machine though kbench did not start it (here a listener whose parent shell exited, so it is no
// child of this process).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Environment } from '@kbench/schema';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ownProcesses } from '../src/own-processes.js';

let dir: string;
let pid: number;
let port: number;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kbench-own-'));
  const portFile = path.join(dir, 'port');
  const listen = `const s = require('net').createServer().listen(0, '127.0.0.1', () => require('fs').writeFileSync(process.argv[1], String(s.address().port))); setTimeout(() => process.exit(0), 60000);`;
  pid = Number(
    execFileSync('sh', [
      '-c',
      `"$0" -e "$1" "$2" >/dev/null 2>&1 & echo $!`,
      process.execPath,
      listen,
      portFile,
    ])
      .toString()
      .trim(),
  );
  for (;;) {
    try {
      port = Number(readFileSync(portFile, 'utf8'));
      if (port > 0) break;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
});

afterAll(() => {
  try {
    process.kill(pid);
  } catch {}
  rmSync(dir, { recursive: true, force: true });
});

const environment = (target: string, bootstrap: string) => ({ target, bootstrap }) as unknown as Environment;

it("is kbench's process and what it started on the bundled and kafka targets", async () => {
  expect(await ownProcesses(environment('bundled', '127.0.0.1:1234'), false)).toEqual([process.pid]);
  expect(await ownProcesses(environment('kafka', '127.0.0.1:1234'), false)).toEqual([process.pid]);
});

it('adds the process listening on a local bootstrap port, by address or by name', async () => {
  expect(await ownProcesses(environment('external', `127.0.0.1:${port}`), false)).toEqual([process.pid, pid]);
  expect(await ownProcesses(environment('external', `localhost:${port}`), false)).toEqual([process.pid, pid]);
});

it('adds nothing for a cluster elsewhere, and cannot tell with load agents or a local port nobody serves', async () => {
  // 192.0.2.0/24 is TEST-NET-1: never this machine's.
  expect(await ownProcesses(environment('external', '192.0.2.1:9092'), false)).toEqual([process.pid]);
  expect(await ownProcesses(environment('bundled', '127.0.0.1:1234'), true)).toBeNull();
  expect(await ownProcesses(environment('external', '127.0.0.1:1'), false)).toBeNull();
});
