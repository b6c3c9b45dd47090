// Room for a preloaded backlog on this machine. The bundled broker and the managed kafka target keep
// their data in a directory here, so a backlog that cannot fit its file system fails the run before
// any load, instead of filling the disk.
import { statfsSync } from 'node:fs';
import { meanMessageSize, type Scenario } from '@kbench/schema';
import { payloadFileBytes } from './payload.js';

/** Stored bytes above the value bytes: batch headers and offset and time indexes (a fraction). */
const STORAGE_OVERHEAD = 0.1;
/** Per record: length, attributes, deltas, key and header framing (random keys are 16 bytes). */
const RECORD_OVERHEAD_BYTES = 32;

/** Records the preload writes to reach `consumers.backlog` value bytes. */
export function backlogRecords(s: Scenario): number {
  const size = s.producers.messageSize;
  const meanSize = Math.max(1, meanMessageSize(size) ?? payloadFileBytes(size));
  return Math.ceil(s.consumers.backlog / meanSize);
}

/** Bytes the backlog takes on disk, every replica counted, with a margin for framing and indexes. */
export function backlogBytesOnDisk(s: Scenario): number {
  const perReplica = s.consumers.backlog * (1 + STORAGE_OVERHEAD) + backlogRecords(s) * RECORD_OVERHEAD_BYTES;
  return Math.ceil(perReplica) * s.topics.replicationFactor;
}

/** Bytes an unprivileged writer may still use on the file system of `dir`. */
export function freeBytes(dir: string): number {
  const fs = statfsSync(dir);
  return fs.bavail * fs.bsize;
}

const thousands = (n: number) => n.toLocaleString('en-US');

/** Throws, naming consumers.backlog, when the backlog would not fit where the target keeps its data. */
export function assertBacklogFits(s: Scenario, dataDir: string): void {
  if (s.consumers.backlog === 0) return;
  const needed = backlogBytesOnDisk(s);
  const free = freeBytes(dataDir);
  if (needed <= free) return;
  throw new Error(
    `consumers.backlog: ${thousands(s.consumers.backlog)} bytes × RF ${s.topics.replicationFactor} needs ${thousands(needed)} bytes on disk (with ${STORAGE_OVERHEAD * 100}% and ${RECORD_OVERHEAD_BYTES} bytes a record for framing and indexes), and the file system of ${dataDir} has ${thousands(free)} bytes free`,
  );
}

/** The room kbench keeps free on a file system of `totalBytes` while load runs: 2 GiB, or a tenth of a smaller one. */
export function diskReserveBytes(totalBytes: number): number {
  return Math.min(2 * 1024 ** 3, Math.floor(totalBytes / 10));
}

/**
 * Why load must stop now, or null: the file system holding the target's data on this machine (the
 * bundled broker's, or the managed Apache Kafka's) has less room than diskReserveBytes. A disk that
 * fills mid-run takes the broker's writes (and the history's) with it; stopping first keeps both.
 */
export function diskShortage(dataDir: string): string | null {
  const fs = statfsSync(dataDir);
  const free = fs.bavail * fs.bsize;
  const reserve = diskReserveBytes(fs.blocks * fs.bsize);
  if (free >= reserve) return null;
  return `the file system of ${dataDir}, where the target keeps its data, has ${thousands(free)} bytes free, under the ${thousands(reserve)} kbench keeps free there (2 GiB, or a tenth of a smaller file system): load stopped ${free === 0 ? 'with the disk full (writes to it failed)' : 'before the disk filled'}. Write less (a lower rate or a shorter run), keep less (topics.config retention.bytes), or free space there`;
}
