// The OAUTHBEARER token the kafkajs driver reads, by the native engine's rules: a file or a command's
// output through a 64 KiB bound (never read whole), RFC 6750's characters only, errors that name the
// source and never quote the token.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TOKEN_BYTES, readBearerToken } from '../src/bearer-token.js';

const TOKEN = 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJiZW5jaCJ9.';
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kbench-token-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const file = async (name: string, text: string | Buffer) => {
  const where = path.join(dir, name);
  await writeFile(where, text);
  return where;
};

describe('a token file', () => {
  it('gives the token without its line end', async () => {
    const tokenFile = await file('ok.jwt', `${TOKEN}\n`);
    expect(await readBearerToken({ mechanism: 'oauthbearer', tokenFile })).toBe(TOKEN);
  });

  it('/dev/zero is refused at the bound, not read without end', async () => {
    await expect(readBearerToken({ mechanism: 'oauthbearer', tokenFile: '/dev/zero' })).rejects.toThrow(
      `sasl: tokenFile /dev/zero holds more than ${MAX_TOKEN_BYTES} bytes, which is no bearer token`,
    );
  });

  it('a file one byte past the bound is refused; one at it is read', async () => {
    const big = await file('big.jwt', 'a'.repeat(MAX_TOKEN_BYTES + 1));
    await expect(readBearerToken({ mechanism: 'oauthbearer', tokenFile: big })).rejects.toThrow(
      /more than 65536 bytes/,
    );
    const full = await file('full.jwt', 'a'.repeat(MAX_TOKEN_BYTES));
    expect(await readBearerToken({ mechanism: 'oauthbearer', tokenFile: full })).toHaveLength(
      MAX_TOKEN_BYTES,
    );
  });

  it('a missing file, an empty one and one with a space are named, the token never quoted', async () => {
    await expect(
      readBearerToken({ mechanism: 'oauthbearer', tokenFile: path.join(dir, 'none') }),
    ).rejects.toThrow(/sasl: cannot read tokenFile .*none: /);
    const empty = await file('empty.jwt', '\n');
    await expect(readBearerToken({ mechanism: 'oauthbearer', tokenFile: empty })).rejects.toThrow(
      `sasl: the OAUTHBEARER token from tokenFile ${empty} is empty`,
    );
    const spaced = await file('spaced.jwt', 'secret-part other');
    const refused = readBearerToken({ mechanism: 'oauthbearer', tokenFile: spaced });
    await expect(refused).rejects.toThrow(/holds characters a bearer token cannot \(RFC 6750\)/);
    await expect(refused).rejects.not.toThrow(/secret-part/);
  });
});

describe('a token command', () => {
  it('gives what it prints', async () => {
    expect(
      await readBearerToken({ mechanism: 'oauthbearer', tokenCommand: `printf '%s\\n' '${TOKEN}'` }),
    ).toBe(TOKEN);
  });

  it('output without end is refused at the bound and the command killed', async () => {
    await expect(readBearerToken({ mechanism: 'oauthbearer', tokenCommand: 'yes' })).rejects.toThrow(
      `sasl: tokenCommand "yes" holds more than ${MAX_TOKEN_BYTES} bytes, which is no bearer token`,
    );
  });

  it('a failing command is named with its exit status and what it said on stderr', async () => {
    await expect(
      readBearerToken({ mechanism: 'oauthbearer', tokenCommand: 'echo no credentials >&2; exit 3' }),
    ).rejects.toThrow(
      'sasl: tokenCommand "echo no credentials >&2; exit 3" failed (exit status 3): no credentials',
    );
  });
});
