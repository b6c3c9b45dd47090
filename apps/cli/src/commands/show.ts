import { History } from '@kbench/history';
import { scenarioToYaml } from '@kbench/schema';
import { parseCommandArgs } from '../args.js';
import { agentsText, faultsText, runHeader, summaryText } from '../format.js';
import { UsageError } from '../usage.js';

export async function showCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('show', argv, { json: { type: 'boolean' } });
  if (positionals.length !== 1) throw new UsageError('kbench show: give one run id (see kbench list)');
  const history = await History.open();
  const id = positionals[0] as string;
  const run = await history.getRun(id);
  if (!run) throw new UsageError(`kbench show: no run ${JSON.stringify(id)} in ${history.path}`);
  if (values.json) {
    process.stdout.write(`${JSON.stringify(run, null, 2)}\n`);
  } else {
    const scenario = scenarioToYaml(run.scenario).trimEnd().replace(/^/gm, '  ');
    process.stdout.write(
      `${runHeader(run)}\n\n${summaryText(run.summary, run.scenario, run.concurrentWith)}${agentsText(run.environment.agents)}${faultsText(run.faults)}\n\nscenario:\n${scenario}\n`,
    );
  }
  return 0;
}
