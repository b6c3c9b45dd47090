// Puts the standalone binaries where the docs say they are, target/release/kbench-broker and
// kbench-agent, from the host-triple directory cargo built them in (scripts/cargo.mjs and the addon's
// `napi build --platform` both build for the host's triple).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

/** The host's target triple, as `rustc -vV` gives it. */
export function hostTriple() {
  const host = /^host: (.+)$/m.exec(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }))?.[1];
  if (!host) throw new Error('could not read the host target triple from `rustc -vV`');
  return host;
}

export function placeBinaries(host = hostTriple()) {
  mkdirSync(join(root, 'target', 'release'), { recursive: true });
  for (const binary of ['kbench-broker', 'kbench-agent']) {
    // Copied beside it, then renamed over it: a binary still running from the old file keeps
    // its inode, where copying in place fails with ETXTBSY.
    const dest = join(root, 'target', 'release', binary);
    copyFileSync(join(root, 'target', host, 'release', binary), `${dest}.new`);
    renameSync(`${dest}.new`, dest);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) placeBinaries();
