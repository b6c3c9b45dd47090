// Runs cargo for the host's target triple, the same one `napi build --platform` uses, so the addon,
// the standalone binary and the tests share one set of compiled dependencies instead of three.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const host = /^host: (.+)$/m.exec(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }))?.[1];
if (!host) throw new Error('could not read the host target triple from `rustc -vV`');

const args = process.argv.slice(2);
execFileSync('cargo', [...args, '--target', host], { cwd: root, stdio: 'inherit' });

// The standalone binaries are documented at target/release/kbench-broker and kbench-agent (one
// package builds both).
if (args[0] === 'build' && args.includes('kbench-broker')) {
  mkdirSync(join(root, 'target', 'release'), { recursive: true });
  for (const binary of ['kbench-broker', 'kbench-agent']) {
    // Copied beside it, then renamed over it: a binary still running from the old file keeps
    // its inode, where copying in place fails with ETXTBSY.
    const dest = join(root, 'target', 'release', binary);
    copyFileSync(join(root, 'target', host, 'release', binary), `${dest}.new`);
    renameSync(`${dest}.new`, dest);
  }
}
