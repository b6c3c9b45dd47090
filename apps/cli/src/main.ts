#!/usr/bin/env node
import { ProfileError, ScenarioError } from '@kbench/schema';
import { CommandError, commandUsage, USAGE, UsageError } from './usage.js';

type Command = (argv: string[]) => Promise<number>;

// Each command is loaded when it is used: the engine, the native broker and DuckDB take a second or
// more to load, which `kbench list` or a usage error should not pay for.
const COMMANDS: Record<string, () => Promise<Command>> = {
  run: async () => (await import('./commands/run.js')).runCommand,
  sweep: async () => (await import('./commands/run.js')).sweepCommand,
  rerun: async () => (await import('./commands/run.js')).rerunCommand,
  list: async () => (await import('./commands/list.js')).listCommand,
  show: async () => (await import('./commands/show.js')).showCommand,
  compare: async () => (await import('./commands/compare.js')).compareCommand,
  gate: async () => (await import('./commands/gate.js')).gateCommand,
  export: async () => (await import('./commands/export.js')).exportCommand,
  reproduce: async () => (await import('./commands/reproduce.js')).reproduceCommand,
  import: async () => (await import('./commands/import.js')).importCommand,
  serve: async () => (await import('./commands/serve.js')).serveCommand,
  broker: async () => (await import('./commands/broker.js')).brokerCommand,
  agent: async () => (await import('./commands/agent.js')).agentCommand,
  agents: async () => (await import('./commands/agents.js')).agentsCommand,
  profile: async () => (await import('./commands/profile.js')).profileCommand,
  trend: async () => (await import('./commands/trend.js')).trendCommand,
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'help' && rest[0] !== undefined && rest[0] in COMMANDS) {
    process.stdout.write(commandUsage(rest[0]));
    return 0;
  }
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  const load = COMMANDS[command];
  if (!load)
    throw new UsageError(
      `kbench: unknown command ${JSON.stringify(command)}; commands: ${Object.keys(COMMANDS).join(', ')}`,
    );
  // `kbench <command> --help` (before any `--`): that command's part of the usage.
  const end = rest.indexOf('--');
  const options = end < 0 ? rest : rest.slice(0, end);
  if (options.includes('--help') || options.includes('-h')) {
    process.stdout.write(commandUsage(command));
    return 0;
  }
  return (await load())(rest);
}

/**
 * Exits once stdout and stderr have been written out: on a pipe their writes are asynchronous, and
 * process.exit() would cut off whatever is still queued (a long `list --json` at 64 KB).
 */
function exitWhenFlushed(code: number): void {
  let pending = 2;
  const done = () => {
    if (--pending === 0) process.exit(code);
  };
  process.stdout.write('', done);
  process.stderr.write('', done);
}

main(process.argv.slice(2)).then(
  (code) => exitWhenFlushed(code),
  (err: unknown) => {
    if (err instanceof UsageError || err instanceof ScenarioError || err instanceof ProfileError) {
      process.stderr.write(`${err.message}\n`);
      exitWhenFlushed(2);
      return;
    }
    if (err instanceof Error && err.name === 'HistoryFolderError') {
      process.stderr.write(`kbench: ${err.message}\n`);
      exitWhenFlushed(2);
      return;
    }
    if (err instanceof Error && err.name === 'AmbiguousRunIdError') {
      process.stderr.write(`kbench: ${err.message}\n`);
      exitWhenFlushed(2);
      return;
    }
    if (err instanceof CommandError) {
      process.stderr.write(`${err.message}\n`);
      exitWhenFlushed(1);
      return;
    }
    process.stderr.write(`kbench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    exitWhenFlushed(1);
  },
);
