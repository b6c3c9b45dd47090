// A `command` fault: the user's own command line, run by /bin/sh on this machine at its time, in a
// process group of its own so that a timeout or the end of the run kills everything it started.
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import type { CommandOutcome } from '@kbench/schema';

/** Bytes of each stream kept from its start and from its end; what lies between is only counted. */
export const OUTPUT_KEEP_BYTES = 16 * 1024;
/** After SIGTERM to the group, how long before SIGKILL. */
const KILL_GRACE_MS = 2000;
/** After the kill, how long to wait for the streams to close (a process may have left the group). */
const CLOSE_WAIT_MS = 5000;

/** A stream's first and last OUTPUT_KEEP_BYTES, and how many bytes between them were dropped. */
export class BoundedOutput {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private dropped = 0;

  add(chunk: Buffer): void {
    let rest = chunk;
    if (this.headBytes < OUTPUT_KEEP_BYTES) {
      const take = rest.subarray(0, OUTPUT_KEEP_BYTES - this.headBytes);
      this.head.push(take);
      this.headBytes += take.length;
      rest = rest.subarray(take.length);
    }
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    while (this.tailBytes > OUTPUT_KEEP_BYTES) {
      const first = this.tail[0] as Buffer;
      const excess = this.tailBytes - OUTPUT_KEEP_BYTES;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailBytes -= first.length;
        this.dropped += first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailBytes -= excess;
        this.dropped += excess;
      }
    }
  }

  /** The kept text (head, then tail, with a marker where bytes were dropped) and the dropped count. */
  result(): { text: string; omittedBytes: number } {
    const head = Buffer.concat(this.head).toString('utf8');
    const tail = Buffer.concat(this.tail).toString('utf8');
    const gap = this.dropped > 0 ? `\n[… ${this.dropped} bytes not kept …]\n` : '';
    return { text: head + gap + tail, omittedBytes: this.dropped };
  }
}

const SHELL_WORDS = new Set(
  (
    '! { } [ [[ : . alias bg break case cd command continue do done echo elif else esac eval exec exit ' +
    'export false fc fg fi for getopts hash if jobs kill local newgrp printf pwd read readonly return ' +
    'set shift test then times trap true type ulimit umask unalias unset until wait while'
  ).split(' '),
);

/**
 * The program a command line starts with, when its first word is a plain word (no quoting,
 * expansion, redirection or assignment) and not a shell keyword or builtin; otherwise null.
 */
export function commandProgram(line: string): string | null {
  const match = /^\s*([A-Za-z0-9_./+@%-]+)(?=\s|$|;|&|\|)/.exec(line);
  const word = match?.[1];
  if (!word || SHELL_WORDS.has(word)) return null;
  return word;
}

/** Why a command line's program cannot run here, or null when it can (or is not a plain word). */
export function missingProgram(line: string, envPath = process.env.PATH ?? ''): string | null {
  const program = commandProgram(line);
  if (program === null) return null;
  const runnable = (file: string) => {
    try {
      if (!statSync(file).isFile()) return false;
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (program.includes('/'))
    return runnable(program) ? null : `program ${program} not found or not executable`;
  for (const dir of envPath.split(path.delimiter)) {
    if (runnable(path.join(dir || '.', program))) return null;
  }
  return `program ${program} not found on PATH`;
}

export interface RunningCommand {
  /** Resolves when the command has ended (by itself or killed) and its output is gathered. */
  done: Promise<CommandOutcome>;
  /** Kills its process group because the run ended; `done` then resolves. */
  killAtRunEnd(): void;
  pid: number | undefined;
}

/**
 * Starts `line` under /bin/sh in a new process group. `tNow` gives seconds since load started, for
 * the outcome's endT. Never throws: a command that cannot start resolves with the error as stderr.
 */
export function startCommand(line: string, timeoutMs: number, tNow: () => number): RunningCommand {
  const startedAt = new Date().toISOString();
  const stdout = new BoundedOutput();
  const stderr = new BoundedOutput();
  let timedOut = false;
  let killedAtRunEnd = false;
  let exited = false;
  const child = spawn('/bin/sh', ['-c', line], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk: Buffer) => stdout.add(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.add(chunk));
  const signalGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // the group is gone already
    }
  };
  const timers: NodeJS.Timeout[] = [];
  /** SIGTERM to the whole group, SIGKILL after a grace period to whatever is left of it. */
  const killGroup = () => {
    signalGroup('SIGTERM');
    timers.push(setTimeout(() => signalGroup('SIGKILL'), KILL_GRACE_MS));
    // Streams held open by a process that left the group must not hold the run: stop waiting.
    timers.push(
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, KILL_GRACE_MS + CLOSE_WAIT_MS),
    );
  };
  timers.push(
    setTimeout(() => {
      if (exited) return;
      timedOut = true;
      killGroup();
    }, timeoutMs),
  );
  const done = new Promise<CommandOutcome>((resolve) => {
    let spawnError: string | null = null;
    child.on('error', (err) => {
      spawnError = err.message;
    });
    child.on('exit', () => {
      exited = true;
      // The shell is gone; anything it left in its group goes with it.
      signalGroup('SIGKILL');
    });
    child.on('close', (code, signal) => {
      for (const timer of timers) clearTimeout(timer);
      const out = stdout.result();
      const err = stderr.result();
      resolve({
        run: line,
        startedAt,
        endedAt: new Date().toISOString(),
        endT: tNow(),
        exitCode: code,
        signal: signal ?? null,
        timedOut,
        killedAtRunEnd,
        stdout: out.text,
        stdoutOmittedBytes: out.omittedBytes,
        stderr: spawnError ? `${err.text}${spawnError}` : err.text,
        stderrOmittedBytes: err.omittedBytes,
      });
    });
  });
  return {
    done,
    pid: child.pid,
    killAtRunEnd: () => {
      if (exited || timedOut || killedAtRunEnd) return;
      killedAtRunEnd = true;
      killGroup();
    },
  };
}
