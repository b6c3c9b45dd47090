// Figures as people read them: always with a unit, three significant digits or so.

const DASH = '–';

function digits(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** 12 rec/s, 12.3 k rec/s, 1.23 M rec/s */
export function formatRecordsPerSec(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return DASH;
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${digits(value / 1e6)} M rec/s`;
  if (abs >= 1e4) return `${digits(value / 1e3)} k rec/s`;
  return `${Math.round(value).toLocaleString('en-US')} rec/s`;
}

/** MB/s in MiB, as Kafka's tools count them. */
export function formatMBPerSec(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return DASH;
  return `${digits(value)} MB/s`;
}

/** Milliseconds below a second, seconds above; microseconds for the very small. */
export function formatMs(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return DASH;
  const abs = Math.abs(value);
  if (abs >= 1000) return `${digits(value / 1000)} s`;
  if (abs > 0 && abs < 0.1) return `${Math.round(value * 1000)} µs`;
  return `${digits(value)} ms`;
}

export function formatCount(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return DASH;
  return Math.round(value).toLocaleString('en-US');
}

/** Bytes in powers of 1024 (KB = 1024 B, as the scenario files count them). */
export function formatBytes(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return DASH;
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = value;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${Math.round(v)} B` : `${digits(v)} ${units[i]}`;
}

/** 5 s, 1 min 05 s, 1 h 02 min */
export function formatElapsed(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return DASH;
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} min`;
  if (m > 0) return `${m} min ${String(s).padStart(2, '0')} s`;
  return `${s} s`;
}

/** Local date and time, to the second: 2025-11-21 13:04:05 */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return DASH;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** How long a run took, from its start and end times. */
export function runLength(startedAt: string, finishedAt: string | null): string {
  if (!finishedAt) return DASH;
  return formatElapsed(new Date(finishedAt).getTime() - new Date(startedAt).getTime());
}
