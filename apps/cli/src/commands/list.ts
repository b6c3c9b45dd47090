import { History } from '@kbench/history';
import { RUN_STATUSES, type RunStatus } from '@kbench/schema';
import { intOption, parseCommandArgs } from '../args.js';
import { runListText } from '../format.js';
import { UsageError } from '../usage.js';

export async function listCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('list', argv, {
    json: { type: 'boolean' },
    status: { type: 'string' },
    search: { type: 'string' },
    limit: { type: 'string' },
  });
  if (positionals.length > 0)
    throw new UsageError(`kbench list: unexpected argument ${JSON.stringify(positionals[0])}`);
  if (values.status !== undefined && !(RUN_STATUSES as readonly string[]).includes(values.status)) {
    throw new UsageError(
      `kbench list: --status must be one of ${RUN_STATUSES.join(', ')} (got ${JSON.stringify(values.status)})`,
    );
  }
  const history = await History.open();
  const runs = await history.listRuns({
    status: values.status as RunStatus | undefined,
    search: values.search,
    limit: intOption('list', 'limit', values.limit, 1, 1_000_000),
  });
  process.stdout.write(values.json ? `${JSON.stringify(runs, null, 2)}\n` : `${runListText(runs)}\n`);
  return 0;
}
