import os from 'node:os';
import path from 'node:path';
import { AGENT_PROTOCOL_VERSION, agentAddressProblem } from '@kbench/schema';
import { parseCommandArgs } from '../args.js';
import { CommandError, isPortInUse, UsageError } from '../usage.js';

const DEFAULT_LISTEN = '127.0.0.1:7755';

/**
 * `kbench agent`: a load agent in the foreground until SIGINT or SIGTERM (docs/agents.md). A
 * controller (`kbench run --agents`) that says hello with the token runs producers and consumers here;
 * the agent itself is the Rust one (the napi addon), the same as the standalone `kbench-agent`.
 */
export async function agentCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('agent', argv, {
    listen: { type: 'string' },
    'token-file': { type: 'string' },
    'tls-cert': { type: 'string' },
    'tls-key': { type: 'string' },
    name: { type: 'string' },
    allow: { type: 'string' },
  });
  if (positionals.length > 0)
    throw new UsageError(`kbench agent: unexpected argument ${JSON.stringify(positionals[0])}`);
  const listen = values.listen ?? DEFAULT_LISTEN;
  // Port 0 picks a free port (the line printed names it).
  const problem = agentAddressProblem(listen.replace(/:0$/, ':1'));
  if (problem) throw new UsageError(`kbench agent: --listen ${problem}`);
  const allow = values.allow?.split(',').map((a) => a.trim());
  for (const target of allow ?? []) {
    const bad = agentAddressProblem(target);
    if (bad) throw new UsageError(`kbench agent: --allow: each entry ${bad}`);
  }
  if ((values['tls-cert'] === undefined) !== (values['tls-key'] === undefined))
    throw new UsageError('kbench agent: --tls-cert and --tls-key go together');
  const { readTokenFile } = await import('@kbench/engine');
  let token: string | undefined;
  if (values['token-file'] !== undefined) {
    try {
      token = readTokenFile(values['token-file'], '--token-file');
    } catch (err) {
      throw new UsageError(`kbench agent: ${(err as Error).message}`);
    }
  } else token = process.env.KBENCH_AGENT_TOKEN || undefined;
  if (token === undefined)
    throw new UsageError(
      'kbench agent: a token is required: --token-file FILE or the environment variable KBENCH_AGENT_TOKEN (a controller must send the same token)',
    );
  const { startAgent } = await import('@kbench/broker-native');
  const resolve = (file: string | undefined) => (file === undefined ? undefined : path.resolve(file));
  let agent: Awaited<ReturnType<typeof startAgent>>;
  try {
    agent = await startAgent({
      listen,
      token,
      name: values.name ?? os.hostname(),
      ...(allow ? { allow } : {}),
      ...(values['tls-cert'] !== undefined
        ? { tlsCert: resolve(values['tls-cert']), tlsKey: resolve(values['tls-key']) }
        : {}),
    });
  } catch (err) {
    if (isPortInUse(err))
      throw new CommandError(
        `kbench agent: ${listen} is already in use (port ${listen.slice(listen.lastIndexOf(':') + 1)}); is another agent running? choose another with --listen`,
      );
    throw new CommandError(`kbench agent: ${(err as Error).message}`);
  }
  // The agent runs on the addon's threads, which do not keep Node's event loop alive: this timer does.
  const keepAlive = setInterval(() => {}, 1 << 30);
  const stopped = new Promise<void>((done) => {
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
  process.stdout.write(
    `kbench agent ${agent.name} listening on ${agent.address} (protocol ${AGENT_PROTOCOL_VERSION})\n`,
  );
  await stopped;
  clearInterval(keepAlive);
  await agent.close();
  return 0;
}
