// What the benchmark ran on, for the doc's header.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';

export interface Machine {
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  kernel: string;
  node: string;
  java: string;
  date: string;
  openFilesLimit: string;
}

export function describeMachine(): Machine {
  const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
  const limit = spawnSync('sh', ['-c', 'echo "$(ulimit -Sn) soft, $(ulimit -Hn) hard"'], {
    encoding: 'utf8',
  });
  return {
    cores: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 1024 ** 3),
    os: osName(),
    kernel: `Linux ${release()}`,
    node: process.version,
    java: (java.stderr ?? '').split('\n')[0]?.trim() || 'unknown',
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    openFilesLimit: limit.stdout.trim(),
  };
}

function osName(): string {
  try {
    const match = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'));
    return match?.[1] ?? 'Linux';
  } catch {
    return process.platform;
  }
}
