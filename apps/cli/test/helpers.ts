// Runs the built `kbench` as a user would, with its own KBENCH_HOME.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const MAIN = path.resolve(here, '../dist/main.js');
export const REPO = path.resolve(here, '../../..');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runKbench(home: string, args: string[], timeoutMs = 180_000, cwd = REPO): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { cwd, env: { ...process.env, KBENCH_HOME: home }, timeout: timeoutMs },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** A free port on 127.0.0.1: bound, read and released. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}
