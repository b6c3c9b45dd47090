#!/usr/bin/env node
import { ProfileError, ScenarioError } from '@kbench/schema';
import { brokerCommand } from './commands/broker.js';
import { compareCommand } from './commands/compare.js';
import { exportCommand } from './commands/export.js';
import { importCommand } from './commands/import.js';
import { listCommand } from './commands/list.js';
import { profileCommand } from './commands/profile.js';
import { reproduceCommand } from './commands/reproduce.js';
import { rerunCommand, runCommand, sweepCommand } from './commands/run.js';
import { serveCommand } from './commands/serve.js';
import { showCommand } from './commands/show.js';
import { USAGE, UsageError } from './usage.js';

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  run: runCommand,
  sweep: sweepCommand,
  rerun: rerunCommand,
  list: listCommand,
  show: showCommand,
  compare: compareCommand,
  export: exportCommand,
  reproduce: reproduceCommand,
  import: importCommand,
  serve: serveCommand,
  broker: brokerCommand,
  profile: profileCommand,
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  const handler = COMMANDS[command];
  if (!handler)
    throw new UsageError(
      `kbench: unknown command ${JSON.stringify(command)}; commands: ${Object.keys(COMMANDS).join(', ')}`,
    );
  return handler(rest);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError || err instanceof ScenarioError || err instanceof ProfileError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`kbench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
