/** A mistake in how the command was called: exit code 2 with this message. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export const USAGE = `kbench: a benchmark workbench for Kafka-protocol streaming

Usage:
  kbench run <scenario> [--set knob.path=value]... [--target T] [--json] [--quick]
  kbench sweep <scenario> [same options as run]      (a scenario with sweep: { knob, values })
  kbench list [--json] [--status S] [--search TEXT] [--limit N]
  kbench show <run-id> [--json]
  kbench compare <run-id> <run-id>... [--json] [--svg DIR] [--png DIR] [--report FILE.html|.md]
  kbench export <run-id>... --csv|--svg|--png|--json|--omb [--out DIR]
  kbench import omb <workload.yaml> [driver.yaml] [--out FILE]  (an OpenMessaging Benchmark workload)
  kbench reproduce <folder>|--all [--quick] [--out DIR]  (a published benchmark: runs and a report)
  kbench rerun <run-id> [--json]                     (the stored resolved scenario, run again)
  kbench serve [--port 7420] [--scenarios DIR]
  kbench broker [--port 9092] [--data-dir DIR] [--nodes 1]
  kbench help

Options of run:
  --set knob.path=value   override any knob (YAML value), e.g. --set producers.acks=all; repeatable
  --target T              bundled (default) or bootstrap servers host:port[,host:port]
  --json                  print the stored run as JSON on stdout (progress goes to stderr)
  --quick                 a short version: duration at most 10s, warm-up at most 2s, records at most 100000,
                          backlog at most 64MB, idle topics at most 1000

Environment:
  KBENCH_HOME             where the history (history.duckdb) lives; default ~/.kbench

Exit codes: 0 done, 1 the run failed, 2 bad usage or invalid scenario.
`;
