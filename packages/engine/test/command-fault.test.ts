// Command faults: the user's own command, run by /bin/sh at its time during a real run on the
// bundled broker, with its outcome recorded. Real processes throughout; no timing assertions.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { History } from '@kbench/history';
import { parseScenario, ScenarioError, type ScenarioInput } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BoundedOutput, missingProgram, OUTPUT_KEEP_BYTES, startCommand } from '../src/command-fault.js';
import { ScenarioRun, startRecordedRun, unsupportedIssues } from '../src/index.js';

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-command-fault-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

function issues(input: ScenarioInput): { path: string; message: string }[] {
  try {
    return unsupportedIssues(parseScenario(input));
  } catch (err) {
    if (err instanceof ScenarioError) return err.issues;
    throw err;
  }
}

/** True while a live (not zombie) process of the process group exists, read from /proc. */
function groupAlive(pgid: number): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its closing parenthesis.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') return true;
  }
  return false;
}

describe('a command fault during a run', () => {
  it('runs at its time on the bundled broker and records exit 0 and its output', async () => {
    const marker = path.join(workDir, 'marker');
    const history = await History.open(path.join(workDir, 'history.duckdb'));
    const live = await startRecordedRun(
      parseScenario({
        duration: '5s',
        producers: { count: 1, rate: 500 },
        faults: [
          { at: '2s', action: 'command', run: `echo written > '${marker}'; echo hello; echo oops >&2` },
        ],
      }),
      { history, workDir },
    );
    const record = await live.done;
    expect(record.status).toBe('completed');
    expect(record.environment.bootstrap.split(',')).toHaveLength(1);
    expect(await readFile(marker, 'utf8')).toBe('written\n');
    const [fault] = record.faults ?? [];
    expect(fault?.action).toBe('command');
    expect(fault?.t).toBeGreaterThanOrEqual(2);
    expect(fault?.error).toBeNull();
    expect(fault?.command).toMatchObject({
      exitCode: 0,
      signal: null,
      timedOut: false,
      killedAtRunEnd: false,
      stdout: 'hello\n',
      stderr: 'oops\n',
      stdoutOmittedBytes: 0,
    });
    expect(Date.parse(fault?.command?.endedAt ?? '')).toBeGreaterThanOrEqual(
      Date.parse(fault?.command?.startedAt ?? ''),
    );
    expect((await history.getRun(record.id))?.faults).toEqual(record.faults);
  });

  it('records a failing command and its exit code, and the run completes', async () => {
    const outcome = await new ScenarioRun(
      parseScenario({
        duration: '3s',
        producers: { count: 1, rate: 500 },
        faults: [{ at: '1s', action: 'command', run: 'echo no such pod >&2; exit 3' }],
      }),
      { runId: 'command-fails', workDir },
    ).execute();
    expect(outcome.status).toBe('completed');
    expect(outcome.summary?.produced.records).toBeGreaterThan(0);
    const [fault] = outcome.faults;
    expect(fault?.command?.exitCode).toBe(3);
    expect(fault?.command?.stderr).toBe('no such pod\n');
    expect(fault?.error).toBe('exit code 3');
  });

  it('kills a command still running when the run ends, with everything it started', async () => {
    const outcome = await new ScenarioRun(
      parseScenario({
        duration: '3s',
        producers: { count: 1, rate: 500 },
        faults: [{ at: '1s', action: 'command', run: 'sleep 600 & sleep 600; echo never' }],
      }),
      { runId: 'command-outlives-run', workDir },
    ).execute();
    expect(outcome.status).toBe('completed');
    const [fault] = outcome.faults;
    expect(fault?.command?.killedAtRunEnd).toBe(true);
    expect(fault?.command?.exitCode).toBeNull();
    expect(fault?.command?.stdout).toBe('');
  });
});

describe('startCommand', () => {
  it('kills the process group of a command that outlives its timeout', async () => {
    const running = startCommand('sleep 600 & sleep 600', 300, () => 0);
    const pgid = running.pid as number;
    expect(groupAlive(pgid)).toBe(true);
    const outcome = await running.done;
    expect(outcome.timedOut).toBe(true);
    expect(outcome.exitCode).toBeNull();
    expect(outcome.signal).toBe('SIGTERM');
    expect(groupAlive(pgid)).toBe(false);
  });

  it('keeps the first and last 16 KiB of its output and counts what it cut', async () => {
    // 100,000 bytes of 'x' then a last line: the head is x's, the tail ends with the last line.
    const outcome = await startCommand(
      `head -c 100000 /dev/zero | tr '\\0' x; echo; echo last line`,
      60_000,
      () => 0,
    ).done;
    expect(outcome.exitCode).toBe(0);
    const total = 100_000 + 1 + 'last line\n'.length;
    expect(outcome.stdoutOmittedBytes).toBe(total - 2 * OUTPUT_KEEP_BYTES);
    expect(outcome.stdout.startsWith('x'.repeat(OUTPUT_KEEP_BYTES))).toBe(true);
    expect(outcome.stdout.endsWith('x\nlast line\n')).toBe(true);
    expect(outcome.stdout).toContain(`[… ${total - 2 * OUTPUT_KEEP_BYTES} bytes not kept …]`);
  });

  it('BoundedOutput keeps all of an output within the bound', () => {
    const out = new BoundedOutput();
    out.add(Buffer.from('a'.repeat(OUTPUT_KEEP_BYTES)));
    out.add(Buffer.from('b'.repeat(OUTPUT_KEEP_BYTES)));
    expect(out.result()).toEqual({
      text: 'a'.repeat(OUTPUT_KEEP_BYTES) + 'b'.repeat(OUTPUT_KEEP_BYTES),
      omittedBytes: 0,
    });
  });
});

describe('command faults refused before any load', () => {
  it('names the field of an empty command, a missing program and a timeout out of range', () => {
    expect(issues({ faults: [{ at: '1s', action: 'command', run: '  ' }] }).map((i) => i.path)).toEqual([
      'faults[0].run',
    ]);
    expect(issues({ faults: [{ at: '1s', action: 'command' }] }).map((i) => i.path)).toEqual([
      'faults[0].run',
    ]);
    expect(
      issues({ faults: [{ at: '1s', action: 'command', run: 'kbench-no-such-program-x delete pod' }] }),
    ).toEqual([{ path: 'faults[0].run', message: 'program kbench-no-such-program-x not found on PATH' }]);
    expect(
      issues({ faults: [{ at: '1s', action: 'command', run: 'true', timeout: '0s' }] }).map((i) => i.path),
    ).toEqual(['faults[0].timeout']);
    expect(
      issues({ faults: [{ at: '1s', action: 'command', run: 'true', node: 1 }] }).map((i) => i.path),
    ).toEqual(['faults[0].node']);
    expect(issues({ faults: [{ at: '1s', action: 'kill' }] }).map((i) => i.path)).toEqual(['faults[0].node']);
  });

  it('allows a command fault on any target, and kill, pause and restart on the bundled one only', () => {
    expect(issues({ target: 'localhost:1', faults: [{ at: '1s', action: 'command', run: 'true' }] })).toEqual(
      [],
    );
    expect(
      issues({ target: 'localhost:1', faults: [{ at: '1s', action: 'kill', node: 1 }] }).map((i) => i.path),
    ).toEqual(['faults']);
  });

  it('checks only a plain first word: shell constructs and builtins pass', () => {
    expect(missingProgram('kbench-no-such-program-x')).toBe(
      'program kbench-no-such-program-x not found on PATH',
    );
    expect(missingProgram('/nonexistent/kubectl get pods')).toBe(
      'program /nonexistent/kubectl not found or not executable',
    );
    expect(missingProgram('sh -c true')).toBeNull();
    expect(missingProgram('cd /tmp && ls')).toBeNull();
    expect(missingProgram('FOO=1 env')).toBeNull();
    expect(missingProgram('"$KUBECTL" get pods')).toBeNull();
    expect(missingProgram('( sleep 1 )')).toBeNull();
  });
});
