// The run slot: one run at a time on a machine, shared by every kbench process (CLI and server)
// through files beside the history in KBENCH_HOME, because two benchmarks on one machine measure
// each other.
//
// `run.lock` names the slot's owner. It is created whole with link(2), which fails when the file
// exists, so nobody ever reads a half-written lock; its owner replaces it whole with rename(2) as
// its series moves from run to run. A lock whose owner is dead (this host, pid gone) is stale: it is
// renamed aside and deleted only if what was moved is still that stale lock (otherwise it is put
// back), so two processes taking over at once cannot both win.
//
// A run started beside the owner on purpose (`--concurrent`) writes `concurrent-runs/<token>.json`
// instead, and a run that takes the lock looks there afterwards. Each writes its own file before it
// reads the other's, so of two runs starting at the same moment at least one sees the other.
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { HistoryFolderError } from './errors.js';
import { kbenchHome } from './paths.js';

/** Who holds the slot, or runs beside its holder: what `run.lock` (or a concurrent-runs file) says. */
export interface SlotHolder {
  pid: number;
  host: string;
  /** The run under way, or null before the first run of a series and between two of them. */
  runId: string | null;
  /** The scenario's name (or what the series runs). */
  name: string;
  /** The command that runs it: `kbench run`, `kbench reproduce`, `kbench serve` ... */
  command: string;
  /** When the slot was taken, ISO 8601. */
  since: string;
  /** True when the owner stops its run cleanly on SIGINT (as on Ctrl-C), so another process may stop it. */
  stopsOnSigint: boolean;
  /** True for a run started beside the slot's holder (an override). */
  concurrent: boolean;
  /** Tells this hold from another one of the same process. */
  token: string;
}

/** What a process says about itself when it takes the slot. */
export interface SlotClaim {
  name: string;
  command: string;
  stopsOnSigint: boolean;
  runId?: string | null;
}

export const RUN_LOCK_FILE = 'run.lock';
export const CONCURRENT_RUNS_DIR = 'concurrent-runs';
/** Rounds of "the lock changed hands while we looked" before giving up (it does not happen in practice). */
const MAX_ATTEMPTS = 20;

/** Holds this process has taken and not released: a lock naming our own pid with another token is stale. */
const ownTokens = new Set<string>();

/** The slot is taken by a live process: the message names it. */
export class RunSlotBusyError extends Error {
  constructor(readonly holder: SlotHolder) {
    super(`another run is going: ${describeHolder(holder)}`);
    this.name = 'RunSlotBusyError';
  }
}

/** `3f2a9c01b2de quickstart (kbench run, pid 1234, since 10:02:11)`. */
export function describeHolder(holder: SlotHolder, now: Date = new Date()): string {
  const run = holder.runId === null ? `${holder.name} (between runs)` : `${holder.runId} ${holder.name}`;
  const where = holder.host === hostname() ? '' : ` on ${holder.host}`;
  return `${run} (${holder.command}, pid ${holder.pid}${where}, since ${clock(holder.since, now)})`;
}

/** Local time of day, with the date when it is not today. */
function clock(iso: string, now: Date): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  const time = `${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`;
  if (at.toDateString() === now.toDateString()) return time;
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${time}`;
}

export type StopResult = { stopped: true; holder: SlotHolder } | { stopped: false; reason: string };

export class RunSlot {
  readonly lockPath: string;
  private readonly concurrentDir: string;

  /** The slot of the KBENCH_HOME at `dir` (the folder of the history file). */
  constructor(readonly dir: string = kbenchHome()) {
    this.lockPath = join(dir, RUN_LOCK_FILE);
    this.concurrentDir = join(dir, CONCURRENT_RUNS_DIR);
  }

  /**
   * Takes the slot, or throws RunSlotBusyError naming the live process that holds it. With
   * `concurrent`, a busy slot is not an error: the hold runs beside the others (SlotHold.concurrent).
   */
  take(claim: SlotClaim, opts: { concurrent?: boolean } = {}): SlotHold {
    makeFolder(this.dir);
    const holder: SlotHolder = {
      pid: process.pid,
      host: hostname(),
      runId: claim.runId ?? null,
      name: claim.name,
      command: claim.command,
      since: new Date().toISOString(),
      stopsOnSigint: claim.stopsOnSigint,
      concurrent: false,
      token: randomBytes(8).toString('hex'),
    };
    try {
      this.takeLock(holder);
      return new SlotHold(this, holder);
    } catch (err) {
      if (!(err instanceof RunSlotBusyError) || !opts.concurrent) throw err;
    }
    const beside: SlotHolder = { ...holder, concurrent: true };
    ownTokens.add(beside.token);
    this.write(beside);
    return new SlotHold(this, beside);
  }

  /** The live holders: the lock's owner first, then the runs beside it. Stale files are removed on the way. */
  holders(): SlotHolder[] {
    const out: SlotHolder[] = [];
    const lock = this.readLock();
    if (lock !== null) {
      if (lock.holder !== null && isAlive(lock.holder)) out.push(lock.holder);
      else this.removeStaleLock(lock.text);
    }
    out.push(...this.concurrentHolders());
    return out;
  }

  /** The live holder whose run is this one, if any. */
  holderOf(runId: string): SlotHolder | undefined {
    return this.holders().find((h) => h.runId === runId);
  }

  /** Why this process cannot stop the holder's run with a signal, or null when it can. */
  cannotSignal(holder: SlotHolder): string | null {
    const who = `${holder.command} (pid ${holder.pid})`;
    if (holder.host !== hostname()) return `${who} runs on ${holder.host}, not on this machine`;
    if (holder.pid === process.pid) return `${who} is this process`;
    if (!holder.stopsOnSigint) return `${who} stops its runs itself; stop it there`;
    try {
      process.kill(holder.pid, 0);
      return null;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM'
        ? `${who} belongs to another user`
        : `${who} has ended`;
    }
  }

  /**
   * Stops a run another process owns, as Ctrl-C would: SIGINT to the pid the slot names, after
   * checking that the slot still names that run.
   */
  stop(runId: string): StopResult {
    const holder = this.holderOf(runId);
    if (!holder) return { stopped: false, reason: `no kbench process on this machine is running ${runId}` };
    const why = this.cannotSignal(holder);
    if (why !== null) return { stopped: false, reason: why };
    process.kill(holder.pid, 'SIGINT');
    return { stopped: true, holder };
  }

  private takeLock(holder: SlotHolder): void {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (this.link(holder)) {
        ownTokens.add(holder.token);
        // A run started beside the previous owner may still be going: the machine is not free.
        const beside = this.concurrentHolders()[0];
        if (beside !== undefined) {
          this.drop(holder);
          throw new RunSlotBusyError(beside);
        }
        return;
      }
      const lock = this.readLock();
      if (lock === null) continue; // released since
      if (lock.holder !== null && isAlive(lock.holder)) throw new RunSlotBusyError(lock.holder);
      this.removeStaleLock(lock.text);
    }
    throw new Error(`could not take the run slot ${this.lockPath}: it changed hands ${MAX_ATTEMPTS} times`);
  }

  /** Creates the lock whole, or returns false when it exists. */
  private link(holder: SlotHolder): boolean {
    const temporary = `${this.lockPath}.${holder.token}.tmp`;
    writeFileSync(temporary, JSON.stringify(holder));
    try {
      linkSync(temporary, this.lockPath);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    } finally {
      unlinkQuietly(temporary);
    }
  }

  /** Rewrites a holder's file (its run changed); a lock that is no longer ours is left alone. */
  write(holder: SlotHolder): void {
    const target = holder.concurrent ? this.concurrentFile(holder.token) : this.lockPath;
    if (!holder.concurrent && this.readLock()?.holder?.token !== holder.token) return;
    if (holder.concurrent) mkdirSync(this.concurrentDir, { recursive: true });
    const temporary = `${target}.${holder.token}.tmp`;
    writeFileSync(temporary, JSON.stringify(holder));
    renameSync(temporary, target);
  }

  /** Removes a holder's file (the lock only while it is still ours). */
  drop(holder: SlotHolder): void {
    ownTokens.delete(holder.token);
    if (holder.concurrent) unlinkQuietly(this.concurrentFile(holder.token));
    else if (this.readLock()?.holder?.token === holder.token) unlinkQuietly(this.lockPath);
  }

  private concurrentFile(token: string): string {
    return join(this.concurrentDir, `${token}.json`);
  }

  private readLock(): { text: string; holder: SlotHolder | null } | null {
    const text = readQuietly(this.lockPath);
    return text === null ? null : { text, holder: parseHolder(text) };
  }

  /** Live runs beside the lock's owner; the files of dead ones are removed. */
  private concurrentHolders(): SlotHolder[] {
    let names: string[];
    try {
      names = readdirSync(this.concurrentDir);
    } catch {
      return [];
    }
    const out: SlotHolder[] = [];
    for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
      const file = join(this.concurrentDir, name);
      const text = readQuietly(file);
      if (text === null) continue;
      const holder = parseHolder(text);
      if (holder !== null && isAlive(holder)) out.push(holder);
      else unlinkQuietly(file); // its own file, written whole: nobody else can be replacing it
    }
    return out;
  }

  /**
   * Removes a stale lock if the lock is still exactly `staleText`. It is renamed aside first (only
   * one process can move a given file), then deleted if it was the stale one, else put back.
   */
  private removeStaleLock(staleText: string): void {
    if (readQuietly(this.lockPath) !== staleText) return;
    const aside = `${this.lockPath}.stale-${randomBytes(8).toString('hex')}`;
    try {
      renameSync(this.lockPath, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    if (readQuietly(aside) !== staleText) {
      // A live lock taken since we looked: put it back (link fails only if yet another exists).
      try {
        linkSync(aside, this.lockPath);
      } catch {}
    }
    unlinkQuietly(aside);
  }
}

/** A process's hold on the slot (or its place beside the holder), until release(). */
export class SlotHold {
  private released = false;
  private readonly onExit = () => this.release();

  constructor(
    private readonly slot: RunSlot,
    private holder: SlotHolder,
  ) {
    // A process that exits without releasing (process.exit on a second Ctrl-C) frees the slot anyway.
    process.on('exit', this.onExit);
  }

  /** True when this hold runs beside another run (an override), not in the slot itself. */
  get concurrent(): boolean {
    return this.holder.concurrent;
  }

  get current(): SlotHolder {
    return { ...this.holder };
  }

  /**
   * Names the run now starting in the slot's files, then returns the ids of the other runs going on
   * this machine: the run's `concurrentWith`. Named first, looked second, so that of two runs starting
   * at once at least one sees the other.
   */
  startRun(runId: string, name: string): string[] {
    this.update({ runId, name });
    return this.others();
  }

  /** Between two runs of a series: the slot is still held, by no run. */
  endRun(): void {
    this.update({ runId: null });
  }

  /** The runs other holders have under way. */
  others(): string[] {
    return this.slot
      .holders()
      .filter((h) => h.token !== this.holder.token && h.runId !== null)
      .map((h) => h.runId as string);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    process.off('exit', this.onExit);
    this.slot.drop(this.holder);
  }

  private update(change: Partial<Pick<SlotHolder, 'runId' | 'name'>>): void {
    if (this.released) return;
    this.holder = { ...this.holder, ...change };
    this.slot.write(this.holder);
  }
}

/** Alive, or cannot tell (another host): either way it holds the slot. */
function isAlive(holder: SlotHolder): boolean {
  if (holder.host !== hostname()) return true;
  if (holder.pid === process.pid) return ownTokens.has(holder.token);
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A holder from a file's text, or null when it is not one (a damaged file counts as stale). */
function parseHolder(text: string): SlotHolder | null {
  try {
    const value = JSON.parse(text) as Partial<SlotHolder>;
    if (typeof value.pid !== 'number' || typeof value.host !== 'string' || typeof value.token !== 'string')
      return null;
    return {
      pid: value.pid,
      host: value.host,
      runId: typeof value.runId === 'string' ? value.runId : null,
      name: String(value.name ?? ''),
      command: String(value.command ?? 'kbench'),
      since: String(value.since ?? ''),
      stopsOnSigint: value.stopsOnSigint === true,
      concurrent: value.concurrent === true,
      token: value.token,
    };
  } catch {
    return null;
  }
}

/** A holder's record is a few hundred bytes; a longer file is not one, and is never read whole. */
const MAX_RECORD_BYTES = 64 * 1024;

/** The file's first MAX_RECORD_BYTES (non-blocking, so a FIFO put in its place cannot hang us). */
function readQuietly(file: string): string | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const buffer = Buffer.allocUnsafe(MAX_RECORD_BYTES);
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0 || length + read === buffer.length) return buffer.toString('utf8', 0, length + read);
      length += read;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return '';
    throw err;
  } finally {
    closeSync(fd);
  }
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {}
}

/** Makes the KBENCH_HOME folder, or says a file is in its way (HistoryFolderError) rather than EEXIST. */
function makeFolder(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') throw new HistoryFolderError(dir);
    throw err;
  }
}
