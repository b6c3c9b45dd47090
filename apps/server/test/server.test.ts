import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../src/server.js';
import { makeWorkspace, type Workspace } from './fixtures.js';

let ws: Workspace;
let server: RunningServer;

beforeAll(async () => {
  ws = await makeWorkspace();
  const webDist = join(ws.dir, 'web-dist');
  await mkdir(join(webDist, 'assets'), { recursive: true });
  await writeFile(join(webDist, 'index.html'), '<!doctype html><title>kbench</title><div id="root"></div>');
  await writeFile(join(webDist, 'assets', 'app-1234.js'), 'console.log("app");');
  // A link inside the library that leads out of it.
  await writeFile(join(ws.dir, 'outside.yaml'), 'name: outside\n');
  await symlink(join(ws.dir, 'outside.yaml'), join(ws.scenariosDir, 'escape.yaml'));
  server = await startServer({ history: ws.history, scenariosDir: ws.scenariosDir, webDist, port: 0 });
});

afterAll(async () => {
  await server?.close();
  await ws?.remove();
});

/** A raw HTTP GET that can send any Host header (fetch cannot). */
function rawGet(path: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('startServer', () => {
  it('listens on 127.0.0.1 on an ephemeral port', async () => {
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.app.server.address()).toMatchObject({ address: '127.0.0.1', port: server.port });
    const res = await fetch(`${server.url}/api/health`);
    expect(await res.json()).toEqual({ ok: true, version: '0.1.0' });
  });

  it('refuses a rebinding Host header on the real socket', async () => {
    expect(await rawGet('/api/health', `attacker.example:${server.port}`)).toBe(403);
    expect(await rawGet('/api/health', `localhost:${server.port}`)).toBe(200);
  });

  it('serves the web app and its index for client routes', async () => {
    const index = await fetch(`${server.url}/`);
    expect(index.status).toBe(200);
    expect(await index.text()).toContain('<div id="root">');
    const asset = await fetch(`${server.url}/assets/app-1234.js`);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    const clientRoute = await fetch(`${server.url}/history`);
    expect(clientRoute.status).toBe(200);
    expect(await clientRoute.text()).toContain('<div id="root">');
    expect((await fetch(`${server.url}/assets/missing-5678.js`)).status).toBe(404);
  });

  it('does not follow a symlink out of the scenarios folder', async () => {
    const res = await fetch(`${server.url}/api/scenarios/escape.yaml`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/inside the scenarios folder/);
  });
});
