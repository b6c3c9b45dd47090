// agent.Containerfile, checked without a container engine (none runs on the test machines): its
// instructions are read and held against the workspace (what it copies exists and is in the build
// context, the cargo invocation builds a binary the workspace declares), against the agent (the port,
// the arguments, which the real kbench-agent parses) and against running as a non-root user.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const CONTAINERFILE = join(ROOT, 'agent.Containerfile');
const AGENT_BINARY = join(ROOT, 'target', 'release', 'kbench-agent');

interface Instruction {
  keyword: string;
  /** The arguments after the keyword, continuation lines joined. */
  rest: string;
  /** The stage it belongs to (0 for the first FROM). */
  stage: number;
}

/** The instructions of a Dockerfile: comments and blank lines dropped, `\` continuations joined. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  let stage = -1;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const whole = pending + line;
    pending = '';
    const m = /^(\w+)\s+(.*)$/.exec(whole);
    if (!m) throw new Error(`not an instruction: ${whole}`);
    const keyword = (m[1] as string).toUpperCase();
    if (keyword === 'FROM') stage++;
    out.push({ keyword, rest: m[2] as string, stage });
  }
  return out;
}

/** An exec-form argument list (`["a", "b"]`). */
function execForm(rest: string): string[] {
  const value: unknown = JSON.parse(rest);
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
    throw new Error(`not an exec-form list: ${rest}`);
  return value;
}

/** Whether .dockerignore leaves `path` (relative to the context) in the build context. */
function inContext(ignore: string, path: string): boolean {
  const glob = (pattern: string) =>
    new RegExp(
      `^${pattern
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*\*/g, '\0')
        .replace(/\*/g, '[^/]*')
        .replace(/\?/g, '[^/]')
        .replace(/\0/g, '.*')}$`,
    );
  const parts = path.split('/');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let included = true;
  for (const raw of ignore.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    const pattern = glob((negated ? line.slice(1) : line).replace(/^\/+|\/+$/g, ''));
    if (prefixes.some((p) => pattern.test(p))) included = negated;
  }
  return included;
}

interface CargoTarget {
  name: string;
  kind: string[];
}
interface CargoPackage {
  name: string;
  manifest_path: string;
  targets: CargoTarget[];
}

function workspacePackages(): CargoPackage[] {
  const result = spawnSync('cargo', ['metadata', '--no-deps', '--format-version', '1', '--offline'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (result.status !== 0) throw new Error(`cargo metadata failed: ${result.stderr}`);
  return (JSON.parse(result.stdout) as { packages: CargoPackage[] }).packages;
}

const all = instructions(readFileSync(CONTAINERFILE, 'utf8'));
const last = Math.max(...all.map((i) => i.stage));
const final = all.filter((i) => i.stage === last);
const one = (list: Instruction[], keyword: string) => {
  const found = list.filter((i) => i.keyword === keyword);
  expect(found, keyword).toHaveLength(1);
  return found[0] as Instruction;
};

describe('agent.Containerfile', () => {
  it('builds in a Rust stage and runs on a slim Debian of the same release', () => {
    const froms = all.filter((i) => i.keyword === 'FROM').map((i) => i.rest);
    expect(froms).toHaveLength(2);
    const builder = /^rust:(\d+)\.(\d+)-slim-(\w+) AS builder$/i.exec(froms[0] as string);
    expect(builder, froms[0]).not.toBeNull();
    // The workspace's Cargo.lock is version 4, which Cargo reads from 1.78 on.
    const lockVersion = /^version = (\d+)$/m.exec(readFileSync(join(ROOT, 'Cargo.lock'), 'utf8'))?.[1];
    expect(lockVersion).toBe('4');
    expect(Number(builder?.[1]) * 1000 + Number(builder?.[2])).toBeGreaterThanOrEqual(1078);
    // The binary links against the builder's glibc: the runtime is the same Debian release.
    expect(froms[1]).toBe(`debian:${builder?.[3]}-slim`);
  });

  it('copies only what exists, what .dockerignore keeps in the context, and every workspace crate', () => {
    const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8');
    const copied: string[] = [];
    for (const copy of all.filter((i) => i.keyword === 'COPY' && !i.rest.startsWith('--from='))) {
      const words = copy.rest.split(/\s+/);
      for (const source of words.slice(0, -1)) {
        expect(existsSync(join(ROOT, source)), `COPY ${source}`).toBe(true);
        expect(inContext(ignore, source), `${source} is left out by .dockerignore`).toBe(true);
        copied.push(source);
      }
    }
    expect(copied).toEqual(expect.arrayContaining(['Cargo.toml', 'Cargo.lock']));
    // Cargo reads every member's manifest, even to build one binary.
    for (const pkg of workspacePackages()) {
      const manifest = relative(ROOT, pkg.manifest_path);
      expect(
        copied.some((c) => manifest === c || manifest.startsWith(`${c.replace(/\/$/, '')}/`)),
        `${manifest} is not copied`,
      ).toBe(true);
      expect(inContext(ignore, manifest), `${manifest} is left out by .dockerignore`).toBe(true);
    }
    // The build output and Node's files stay out of the context.
    expect(inContext(ignore, 'target/release/kbench-agent')).toBe(false);
    expect(inContext(ignore, 'node_modules/kafkajs/package.json')).toBe(false);
  });

  it('builds, with the locked versions, the kbench-agent binary the workspace declares, and installs it', () => {
    const builds = all.filter((i) => i.keyword === 'RUN' && /\bcargo build\b/.test(i.rest));
    expect(builds).toHaveLength(1);
    const words = (builds[0] as Instruction).rest.split(/\s+/);
    expect(words).toEqual(expect.arrayContaining(['--release', '--locked']));
    const pkg = words[words.indexOf('-p') + 1];
    const bin = words[words.indexOf('--bin') + 1];
    const declared = workspacePackages().find((p) => p.name === pkg);
    expect(declared, `package ${pkg}`).toBeDefined();
    expect(declared?.targets.filter((t) => t.kind.includes('bin')).map((t) => t.name)).toContain(bin);
    expect(bin).toBe('kbench-agent');
    // What the final stage copies is what that build wrote, where the entrypoint finds it.
    const workdir = one(
      all.filter((i) => i.stage === 0),
      'WORKDIR',
    ).rest;
    const install = final.find((i) => i.keyword === 'COPY' && i.rest.startsWith('--from=builder '));
    expect(install?.rest).toBe(`--from=builder ${workdir}/target/release/${bin} /usr/local/bin/${bin}`);
    expect(execForm(one(final, 'ENTRYPOINT').rest)).toEqual([bin]);
  });

  it('runs as a numeric user other than root', () => {
    const user = one(final, 'USER').rest;
    const m = /^(\d+)(?::(\d+))?$/.exec(user);
    expect(m, `USER ${user}: numeric, so runAsNonRoot can check it`).not.toBeNull();
    expect(Number(m?.[1])).toBeGreaterThan(0);
    expect(Number(m?.[2] ?? 1)).toBeGreaterThan(0);
    // The user exists in the image (useradd with that uid).
    const created = final.find((i) => i.keyword === 'RUN' && i.rest.includes(`useradd`));
    expect(created?.rest).toContain(`--uid ${m?.[1]}`);
  });

  it("exposes the agent's default port and listens on every interface there, with arguments kbench-agent takes", () => {
    const lib = readFileSync(join(ROOT, 'crates', 'agent', 'src', 'lib.rs'), 'utf8');
    const port = /pub const DEFAULT_LISTEN: &str = "[^"]*:(\d+)";/.exec(lib)?.[1];
    expect(port).toBeDefined();
    expect(one(final, 'EXPOSE').rest).toBe(port);
    const args = execForm(one(final, 'CMD').rest);
    expect(args).toEqual(['--listen', `0.0.0.0:${port}`]);
    // The real binary parses every flag before --help (an unknown flag or a bad value is exit 2).
    if (!existsSync(AGENT_BINARY)) throw new Error(`${AGENT_BINARY} is missing: run npm run build first`);
    const parsed = spawnSync(AGENT_BINARY, [...args, '--help'], { encoding: 'utf8' });
    expect(parsed.status, parsed.stderr).toBe(0);
    const refused = spawnSync(AGENT_BINARY, ['--listen', '7755', '--help'], { encoding: 'utf8' });
    expect(refused.status).toBe(2);
  });
});
