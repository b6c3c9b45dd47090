// Runs cargo for the host's target triple, the same one `napi build --platform` uses, so the addon,
// the standalone binary and the tests share one set of compiled dependencies instead of three.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { hostTriple, placeBinaries } from './place-binaries.mjs';

const root = join(import.meta.dirname, '..');
const host = hostTriple();
const args = process.argv.slice(2);
execFileSync('cargo', [...args, '--target', host], { cwd: root, stdio: 'inherit' });

// The standalone binaries are documented at target/release/kbench-broker and kbench-agent (one
// package builds both).
if (args[0] === 'build' && args.includes('kbench-broker')) placeBinaries(host);
