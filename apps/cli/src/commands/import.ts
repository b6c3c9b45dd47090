// `kbench import omb <workload.yaml> [driver.yaml] [--out FILE]`: an OpenMessaging Benchmark
// workload (and its Kafka driver file) as a kbench scenario, with every field that did not map.
import { readFile, writeFile } from 'node:fs/promises';
import { ombToScenario, parseScenario, readScenarioText, scenarioToYaml } from '@kbench/schema';
import { parseCommandArgs } from '../args.js';
import { UsageError } from '../usage.js';

async function readYaml(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(
      `kbench import: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  return readScenarioText(text, file);
}

export async function importCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('import', argv, { out: { type: 'string' } });
  const [format, workloadFile, driverFile, ...extra] = positionals;
  if (format !== 'omb' || workloadFile === undefined || extra.length > 0) {
    throw new UsageError('kbench import: use kbench import omb <workload.yaml> [driver.yaml] [--out FILE]');
  }
  const workload = await readYaml(workloadFile);
  const driver = driverFile === undefined ? undefined : await readYaml(driverFile);
  let imported: ReturnType<typeof ombToScenario>;
  try {
    imported = ombToScenario(workload, driver);
  } catch (err) {
    throw new UsageError(`kbench import: ${(err as Error).message}`);
  }
  // Validated, so a workload outside kbench's ranges fails here, naming the field.
  parseScenario(imported.scenario, workloadFile);
  const sources = [workloadFile, driverFile].filter(Boolean).join(' and ');
  const header = [
    `# Imported by kbench import omb from ${sources}.`,
    ...(imported.unmapped.length > 0
      ? ['# Not carried over:', ...imported.unmapped.map((u) => `#   ${u.field}: ${u.reason}`)]
      : ['# Every field was carried over.']),
  ].join('\n');
  const yaml = `${header}\n${scenarioToYaml(imported.scenario)}`;
  if (values.out) {
    await writeFile(values.out, yaml);
    process.stdout.write(`${values.out}\n`);
  } else process.stdout.write(yaml);
  for (const u of imported.unmapped) process.stderr.write(`not mapped: ${u.field}: ${u.reason}\n`);
  return 0;
}
