// `kbench profile add --sasl oauthbearer` with a token file or a token command, spawned as a user
// runs it: exactly one of the two, and usage errors (exit 2) that name the flags to use.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKbench } from './helpers.js';

let home: string;
let tokenFile: string;

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-cli-oauth-'));
  tokenFile = path.join(home, 'token.jwt');
  await writeFile(tokenFile, 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJiZW5jaCJ9.\n', { mode: 0o600 });
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

const add = (name: string, ...flags: string[]) =>
  runKbench(home, ['profile', 'add', name, '--bootstrap', 'kafka.example:9093', '--tls', ...flags]);

describe('kbench profile add --sasl oauthbearer', () => {
  it('with --token-file: saved with the absolute path, shown with it', async () => {
    const relative = path.relative(process.cwd(), tokenFile);
    const added = await runKbench(
      home,
      [
        'profile',
        'add',
        'oauth-file',
        '--bootstrap',
        'k:9093',
        '--sasl',
        'oauthbearer',
        '--token-file',
        relative,
      ],
      180_000,
      process.cwd(),
    );
    expect(added.code, added.stderr).toBe(0);
    const show = await runKbench(home, ['profile', 'show', 'oauth-file', '--json']);
    expect(JSON.parse(show.stdout).sasl).toEqual({ mechanism: 'oauthbearer', tokenFile });
    const text = await runKbench(home, ['profile', 'show', 'oauth-file']);
    expect(text.stdout).toMatch(/sasl\.mechanism\s+oauthbearer/);
    expect(text.stdout).toContain(`sasl.tokenFile`);
    expect(text.stdout).toContain(tokenFile);
  });

  it('with --token-command: saved as written, listed with where the token comes from', async () => {
    const added = await add('oauth-cmd', '--sasl', 'OAUTHBEARER', '--token-command', `cat ${tokenFile}`);
    expect(added.code, added.stderr).toBe(0);
    const list = await runKbench(home, ['profile', 'list']);
    expect(list.stdout).toMatch(
      /oauth-cmd\s+kafka\.example:9093\s+TLS, SASL oauthbearer, token from a command/,
    );
    const show = await runKbench(home, ['profile', 'show', 'oauth-cmd', '--json']);
    expect(JSON.parse(show.stdout).sasl).toEqual({
      mechanism: 'oauthbearer',
      tokenCommand: `cat ${tokenFile}`,
    });
  });

  it('neither a file nor a command: exit 2 naming both flags', async () => {
    const r = await add('none', '--sasl', 'oauthbearer');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'kbench profile add: --sasl oauthbearer needs a token: --token-file F (a file holding it) or --token-command CMD (a command printing it)',
    );
  });

  it('both: exit 2', async () => {
    const r = await add(
      'both',
      '--sasl',
      'oauthbearer',
      '--token-file',
      tokenFile,
      '--token-command',
      'true',
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('give one of --token-file and --token-command');
  });

  it('a password with oauthbearer, or a token without it: exit 2', async () => {
    const withPassword = await add(
      'pw',
      '--sasl',
      'oauthbearer',
      '--token-file',
      tokenFile,
      '--password',
      'x',
    );
    expect(withPassword.code).toBe(2);
    expect(withPassword.stderr).toContain('--sasl oauthbearer takes a token, not --username or a password');
    const noMechanism = await add('tok', '--token-file', tokenFile);
    expect(noMechanism.code).toBe(2);
    expect(noMechanism.stderr).toContain('--token-file and --token-command need --sasl oauthbearer');
    const missing = await add('missing', '--sasl', 'oauthbearer', '--token-file', path.join(home, 'nope'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--token-file: no file');
  });

  it('an unknown mechanism: exit 2 listing the four', async () => {
    const r = await add('gss', '--sasl', 'gssapi');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'kbench profile add: --sasl must be one of plain, scram-sha-256, scram-sha-512, oauthbearer (got "gssapi")',
    );
  });
});
