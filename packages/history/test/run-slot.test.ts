// The run slot across OS processes: one holder at a time, stale locks of dead processes taken
// over, runs started beside the holder on purpose recorded on both sides, and Stop by signal.
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { History, RUN_LOCK_FILE, RunSlot, RunSlotBusyError, type SlotClaim } from '../src/index.js';
import { makeRun, tempDir } from './fixtures.js';

const HOLDER = fileURLToPath(new URL('./fixtures/slot-holder.mjs', import.meta.url));

interface Said {
  taken?: boolean;
  concurrent?: boolean;
  others?: string[];
  refused?: string;
  sigint?: boolean;
}

interface Holder {
  child: ChildProcess;
  /** The next thing the process says. */
  next(): Promise<Said>;
  exited: Promise<number | null>;
}

let dir: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];

beforeEach(async () => {
  const temp = await tempDir();
  dir = temp.dir;
  cleanup = temp.cleanup;
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await cleanup();
});

const claim = (runId: string | null, name = 'quickstart'): SlotClaim => ({
  name,
  command: 'kbench run',
  stopsOnSigint: true,
  runId,
});

function startHolder(args: string[]): Holder {
  const child = fork(HOLDER, [dir, ...args], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const said: Said[] = [];
  const waiting: { resolve: (s: Said) => void; reject: (e: Error) => void }[] = [];
  child.on('message', (message: Said) => {
    const waiter = waiting.shift();
    if (waiter) waiter.resolve(message);
    else said.push(message);
  });
  // Resolves once Node has reaped the child, so its pid no longer counts as alive.
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // A process that ends with nothing more to say fails whoever waits for it, with its stderr. Its
  // channel closes after every message it sent has arrived.
  child.on('disconnect', () => {
    for (const waiter of waiting.splice(0))
      waiter.reject(new Error(`the slot holder ended without a word:\n${stderr}`));
  });
  const next = () => {
    const first = said.shift();
    if (first) return Promise.resolve(first);
    if (!child.connected) return Promise.reject(new Error(`the slot holder has ended:\n${stderr}`));
    return new Promise<Said>((resolve, reject) => waiting.push({ resolve, reject }));
  };
  return { child, next, exited };
}

describe('one run at a time on a machine', () => {
  it('a second process is refused while this one holds the slot, and the refusal names the run', async () => {
    const hold = new RunSlot(dir).take(claim(null));
    hold.startRun('aaaa1111', 'quickstart');
    const other = startHolder([JSON.stringify(claim('bbbb2222'))]);
    const said = await other.next();
    expect(said.taken).toBeUndefined();
    expect(said.refused).toMatch(
      new RegExp(
        `^another run is going: aaaa1111 quickstart \\(kbench run, pid ${process.pid}, since \\d\\d:\\d\\d:\\d\\d\\)$`,
      ),
    );
    hold.release();
  });

  it('this process is refused while another process holds the slot', async () => {
    const other = startHolder([JSON.stringify(claim('cccc3333', 'producer-1-thread'))]);
    expect((await other.next()).taken).toBe(true);
    expect(() => new RunSlot(dir).take(claim(null))).toThrow(
      `another run is going: cccc3333 producer-1-thread (kbench run, pid ${other.child.pid},`,
    );
    other.child.send('release');
    expect(await other.exited).toBe(0);
    const hold = new RunSlot(dir).take(claim(null));
    expect(hold.concurrent).toBe(false);
    hold.release();
  });

  it('of four processes taking the slot at the same time, exactly one gets it', async () => {
    const holders = ['a', 'b', 'c', 'd'].map((n) =>
      startHolder([JSON.stringify(claim(`${n}${n}${n}${n}0000`))]),
    );
    const said = await Promise.all(holders.map((h) => h.next()));
    expect(said.filter((s) => s.taken)).toHaveLength(1);
    expect(said.filter((s) => s.refused)).toHaveLength(3);
  });

  it('a lock left by a process that died (SIGKILL) is taken over', async () => {
    const doomed = startHolder([JSON.stringify(claim('dddd4444'))]);
    expect((await doomed.next()).taken).toBe(true);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const lock = join(dir, RUN_LOCK_FILE);
    expect(JSON.parse(readFileSync(lock, 'utf8')).pid).toBe(doomed.child.pid);
    const slot = new RunSlot(dir);
    const hold = slot.take(claim(null));
    expect(JSON.parse(readFileSync(lock, 'utf8')).pid).toBe(process.pid);
    hold.startRun('eeee5555', 'quickstart');
    expect(slot.holders().map((h) => h.runId)).toEqual(['eeee5555']);
    hold.release();
    expect(existsSync(lock)).toBe(false);
  });

  it('a damaged lock file counts as stale', async () => {
    writeFileSync(join(dir, RUN_LOCK_FILE), '{"pid": 12');
    const hold = new RunSlot(dir).take(claim(null));
    expect(hold.concurrent).toBe(false);
    hold.release();
  });

  it('a huge lock file is not read whole: it counts as damaged, and a FIFO in its place does not hang', async () => {
    // 64 MiB of a valid-looking prefix: read whole it would be parsed; bounded, it is damaged.
    writeFileSync(
      join(dir, RUN_LOCK_FILE),
      `{"pid": ${process.pid}, "x": "${'x'.repeat(64 * 1024 * 1024)}"}`,
    );
    const hold = new RunSlot(dir).take(claim(null));
    expect(hold.concurrent).toBe(false);
    hold.release();
    execFileSync('mkfifo', [join(dir, RUN_LOCK_FILE)]);
    const second = new RunSlot(dir).take(claim(null));
    expect(second.concurrent).toBe(false);
    second.release();
  });
});

describe('running beside the holder on purpose (--concurrent)', () => {
  it('records concurrentWith on both runs, the first run stored by another process', async () => {
    const file = join(dir, 'history.duckdb');
    const history = await History.open(file);
    const first = startHolder([JSON.stringify(claim('ffff6666')), 'alone', file, JSON.stringify(makeRun())]);
    expect(await first.next()).toEqual({ taken: true, concurrent: false, others: [] });

    const hold = new RunSlot(dir).take(claim(null), { concurrent: true });
    expect(hold.concurrent).toBe(true);
    const others = hold.startRun('gggg7777', 'quickstart');
    expect(others).toEqual(['ffff6666']);
    await history.createRun(makeRun({ id: 'gggg7777', concurrentWith: others }));

    expect((await history.getRun('ffff6666'))?.concurrentWith).toEqual(['gggg7777']);
    expect((await history.getRun('gggg7777'))?.concurrentWith).toEqual(['ffff6666']);
    expect(await history.concurrentWith('ffff6666')).toEqual(['gggg7777']);
    const listed = await history.listRuns();
    expect(Object.fromEntries(listed.map((r) => [r.id, r.concurrentWith]))).toEqual({
      ffff6666: ['gggg7777'],
      gggg7777: ['ffff6666'],
    });
    hold.release();
    // Deleting one run leaves the other's warning: its figures were still shared.
    expect(await history.deleteRun('gggg7777')).toBe(true);
    expect((await history.getRun('ffff6666'))?.concurrentWith).toEqual(['gggg7777']);
  });

  it('a run that takes the slot is refused while a run started beside the last holder still goes', async () => {
    const holder = new RunSlot(dir).take(claim(null));
    holder.startRun('hhhh8888', 'quickstart');
    const beside = startHolder([JSON.stringify(claim('iiii9999', 'beside')), 'concurrent']);
    expect(await beside.next()).toEqual({ taken: true, concurrent: true, others: ['hhhh8888'] });
    holder.release();
    expect(() => new RunSlot(dir).take(claim(null))).toThrow(RunSlotBusyError);
    expect(() => new RunSlot(dir).take(claim(null))).toThrow(
      `another run is going: iiii9999 beside (kbench run, pid ${beside.child.pid},`,
    );
    beside.child.send('release');
    await beside.exited;
    new RunSlot(dir).take(claim(null)).release();
  });

  it('without another run going, the override takes the slot as usual', () => {
    const hold = new RunSlot(dir).take(claim(null), { concurrent: true });
    expect(hold.concurrent).toBe(false);
    expect(hold.startRun('jjjj0000', 'quickstart')).toEqual([]);
    hold.release();
  });
});

describe('stopping a run another process owns', () => {
  it('sends SIGINT to the pid the slot names for that run, and to nobody for another run', async () => {
    const owner = startHolder([JSON.stringify(claim('kkkk1111'))]);
    expect((await owner.next()).taken).toBe(true);
    const slot = new RunSlot(dir);
    expect(slot.stop('llll2222')).toEqual({
      stopped: false,
      reason: 'no kbench process on this machine is running llll2222',
    });
    const result = slot.stop('kkkk1111');
    expect(result.stopped).toBe(true);
    expect(await owner.next()).toEqual({ sigint: true });
    expect(await owner.exited).toBe(0);
  });

  it('does not signal an owner that stops its runs itself (the server)', async () => {
    const owner = startHolder([
      JSON.stringify({ ...claim('mmmm3333'), command: 'kbench serve', stopsOnSigint: false }),
    ]);
    expect((await owner.next()).taken).toBe(true);
    const result = new RunSlot(dir).stop('mmmm3333');
    expect(result).toEqual({
      stopped: false,
      reason: `kbench serve (pid ${owner.child.pid}) stops its runs itself; stop it there`,
    });
    owner.child.send('release');
    expect(await owner.exited).toBe(0);
  });
});
