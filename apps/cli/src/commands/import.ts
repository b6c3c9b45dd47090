// `kbench import omb <workload.yaml> [driver.yaml] [--out FILE]`: an OpenMessaging Benchmark
// workload (and its Kafka driver file) as a kbench scenario, with every field that did not map.
import { access, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  fileErrorText,
  type OmbImport,
  ombToScenario,
  parseScenario,
  readScenarioText,
  scenarioToYaml,
} from '@kbench/schema';
import { parseCommandArgs } from '../args.js';
import { UsageError } from '../usage.js';

async function readYaml(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`kbench import: cannot read ${file}: ${fileErrorText(err)}`);
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
  await locatePayloadFile(imported, workloadFile, workload);
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

/**
 * OMB's payloadFile is relative to where OMB runs (its repository root, holding workloads/ and
 * payload/). Looks for it beside the workload file, one folder up, and in the working directory,
 * and writes the absolute path; a file not found falls back to messageSize, named as not mapped.
 */
async function locatePayloadFile(
  imported: OmbImport,
  workloadFile: string,
  workload: unknown,
): Promise<void> {
  const producers = imported.scenario.producers as Record<string, unknown> | undefined;
  const ms = producers?.messageSize as { payloadFile?: string } | undefined;
  if (!producers || typeof ms?.payloadFile !== 'string') return;
  const file = ms.payloadFile;
  const folder = path.dirname(path.resolve(workloadFile));
  const candidates = path.isAbsolute(file)
    ? [file]
    : [path.resolve(folder, file), path.resolve(folder, '..', file), path.resolve(file)];
  for (const candidate of candidates) {
    try {
      await access(candidate);
      producers.messageSize = { payloadFile: candidate };
      return;
    } catch {}
  }
  const size = (workload as { messageSize?: unknown } | null)?.messageSize;
  if (typeof size === 'number') producers.messageSize = size;
  else delete producers.messageSize;
  imported.unmapped.push({
    field: 'payloadFile',
    reason: `${file} not found (looked in ${candidates.join(', ')}); kbench sends random values of messageSize bytes instead`,
  });
}
