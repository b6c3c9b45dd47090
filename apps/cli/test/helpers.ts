// Runs the built `kbench` as a user would, with its own KBENCH_HOME.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
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

export function runKbench(
  home: string,
  args: string[],
  timeoutMs = 180_000,
  cwd = REPO,
  env: NodeJS.ProcessEnv = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { cwd, env: { ...process.env, ...env, KBENCH_HOME: home }, timeout: timeoutMs },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * `count` consecutive free ports on 127.0.0.1, the first returned: `kbench broker --nodes N` listens on
 * port .. port + N - 1, and a lone free port says nothing of its neighbours, which another test's
 * client connections may hold. Each is bound and released; retried until a run of them is free.
 */
export async function freePorts(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = await freePort();
    if (base + count - 1 > 65_535) continue;
    const held: Server[] = [];
    let free = true;
    for (let port = base + 1; port < base + count && free; port++) {
      const server = createServer();
      server.listen(port, '127.0.0.1');
      free = await Promise.race([
        once(server, 'listening').then(() => true),
        once(server, 'error').then(() => false),
      ]);
      if (free) held.push(server);
    }
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
    if (free) return base;
  }
  throw new Error(`no ${count} consecutive free ports on 127.0.0.1 in 50 tries`);
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
