/** A mistake in how the command was called: exit code 2 with this message. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A failure the user can act on, printed as its message alone (no stack); exit 1. */
export class CommandError extends Error {
  override name = 'CommandError';
}

/** True for an error that says a port is taken (Node's EADDRINUSE, or the broker's os error 98). */
export function isPortInUse(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  if ((err as { code?: unknown }).code === 'EADDRINUSE') return true;
  return /address already in use/i.test(String((err as { message?: unknown }).message ?? ''));
}

export const USAGE = `kbench: a benchmark workbench for Kafka-protocol streaming

Usage:
  kbench run <scenario> [--set knob.path=value]... [--target T]... [--json] [--quick]
             [--dry-run] [--keep-topics] [--max-rate N] [--concurrent]
             [--agents [producers@|consumers@]H:P,... [--agent-token-file F]] [--repeat N]
             [--baseline RUN|TAG|SERIES [--max-regression 10%] [--metric M,...] [--junit F] [--markdown F]]
  kbench sweep <scenario> [same options as run]      (a scenario with sweep: { knob, values })
  kbench list [--json] [--status S] [--search TEXT] [--limit N]
  kbench show <run-id> [--json]
  kbench compare <run-id> <run-id>... [--baseline ID] [--json] [--svg DIR] [--png DIR] [--report FILE.html|.md]
  kbench gate <run|series|tag> --baseline RUN|TAG|SERIES [--max-regression 10%] [--metric M,...]
              [--junit FILE] [--markdown FILE] [--json]   (the regression gate: exit 3 on a regression)
  kbench trend <scenario> [--target T] [--metric M] [--sweep-value V] [--json] [--svg DIR] [--png DIR]
                                                     (each headline figure over time, change points)
  kbench export <run-id>... --csv|--svg|--png|--json|--omb|--hlog|--histograms-json [--out DIR]
  kbench import omb <workload.yaml> [driver.yaml] [--out FILE]  (an OpenMessaging Benchmark workload)
  kbench reproduce <folder>|--all [--quick] [--out DIR] [--concurrent]  (a published benchmark: runs, a report)
  kbench rerun <run-id> [--json] [--concurrent]      (the stored resolved scenario, run again)
  kbench serve [--port 7420] [--scenarios DIR]
  kbench broker [--port 9092] [--data-dir DIR] [--nodes N] [--fsync none|batch|interval:<ms>] [--processes]
                [--no-auto-create-topics] [--metrics HOST:PORT]
  kbench agent [--listen 127.0.0.1:7755] [--token-file F] [--name N] [--allow H:P,...]
               [--tls-cert F --tls-key F]          (a load agent: runs a controller's clients here)
  kbench agents manifest --count N [--name kbench-agent] [--namespace default] [--image IMAGE] [--port 7755]
                [--token-secret NAME] [--tls-secret NAME] [--cpu 2] [--memory 1Gi]
                [--anti-affinity required|preferred] [--allow H:P,...]   (N agents on Kubernetes, as YAML)
  kbench profile add <name> --bootstrap H:P[,H:P] [--tls] [--ca F] [--cert F --key F] [--insecure]
                 [--servername S] [--sasl plain|scram-sha-256|scram-sha-512 --username U
                 --password-stdin|--password-env VAR|--password P] [--sasl oauthbearer --token-file F|--token-command CMD]
                 [--max-rate N] [--description T] [--replace]
                 [--agents [producers@|consumers@]H:P,... [--agent-token-file F] [--agent-ca F|--agent-insecure]]
                 [--metrics URL,... [--metrics-kind auto|kafka-jmx|redpanda|kbench]]
  kbench profile list [--json] | show <name> [--json] | remove <name>
  kbench help [command]                              (or kbench <command> --help)

Options of run:
  <scenario>              a file, or a library name: quickstart, kreps-2014/producer-1-thread, or
                          user/NAME for one saved from the workbench's composer
  --set knob.path=value   override any knob (YAML value), e.g. --set producers.acks=all; repeatable
                          (a Kafka client property by its name after config., e.g.
                          --set producers.config.max.in.flight.requests.per.connection=1)
  --target T              bundled (default), kafka (a managed Apache Kafka on this machine), a profile
                          name (kbench profile list) or bootstrap servers host:port[,host:port];
                          several --target run the scenario on each in turn and compare them
  --dry-run               print the topics it would create and the load it would send, and exit;
                          nothing is created or sent and the target is not contacted
  --keep-topics           leave the run's topics and consumer groups on the cluster (--set topics.keep=true)
  --max-rate N            a rate ceiling in records/s: a fixed rate above it is refused, max and
                          find-max are capped at it (a profile's maxRate applies too; the lower wins)
  --json                  print the stored run as JSON on stdout (progress goes to stderr)
  --quick                 a short version: duration at most 3s, warm-up at most 1s, records at most 20000,
                          backlog at most 64MB, idle topics at most 1000; faults keep their place
                          in the run, scaled to its new length
  --concurrent            run even while another kbench run is going on this machine (otherwise
                          refused, exit 2); both runs record concurrentWith and are marked as such
  --agents LIST           run the producers and consumers on load agents (kbench agent) instead of
                          here: host:port of each, producers@host:port or consumers@host:port for an
                          agent of one role; needs driver: native (in place of a profile's agents)
  --agent-token-file F    the agents' token (or KBENCH_AGENT_TOKEN), when the profile has none
  --repeat N              run it N times (1 to 100) as one series, several --target or a sweep's points
                          interleaved (A B A B ...); prints each figure's mean ± 95% CI and CV
  --baseline REF          then judge the runs against a baseline (kbench gate: options of gate)

Options of gate:
  --baseline REF          the runs to judge against: a series id, a run id (or prefix), or a tag;
                          completed runs of the same scenario
  --max-regression P      the largest change for the worse that passes, in percent (default 10%);
                          a regression must also be outside the noise (Welch's t-test at 95%)
  --metric M,...          the figures judged (default produced.recordsPerSec, consumed.recordsPerSec,
                          publishLatencyMs.p99, endToEndLatencyMs.p99, those the baseline has)
  --markdown FILE         write the summary for a pull-request comment (it is printed as well)
  --junit FILE            write JUnit XML: one test case per metric, a failure per regression

Options of compare:
  --baseline ID           one of the runs compared (id or prefix): every other run's figures show their
                          change against its, +x% / -y% (with --json: baseline and changes in percent)
  --json                  the runs' summaries and the settings that differ, as JSON
  --svg DIR, --png DIR    write the comparison charts (percentile ladder, headline bars, time series)
  --report FILE           a self-contained HTML report (FILE.html) or Markdown with chart files (FILE.md)

Options of trend:
  <scenario>              a scenario's name as its runs store it (kbench list); its completed runs
                          oldest first (a sweep's runs only with --sweep-value)
  --target T              the target as the runs store it (bundled, kafka, a profile, bootstrap
                          servers); needed when the scenario ran on several
  --metric M              one figure: produced.recordsPerSec, produced.mbPerSec, publishLatencyMs.p50,
                          publishLatencyMs.p99, endToEndLatencyMs.p99, consumed.recordsPerSec
  --sweep-value V         a sweep's point: the runs of the scenario's sweep that measured value V
  --json                  the trend as JSON (as GET /api/trends answers it)
  --svg DIR, --png DIR    write a chart per figure (kbench-trend-<figure>.svg), as the Trends page draws it

Options of export:
  --csv                   samples and summary as CSV, and a run's faults
  --svg, --png            every chart of the run (several ids: the comparison charts)
  --json                  the stored run as JSON
  --omb                   the run as an OpenMessaging Benchmark result (for its charting scripts)
  --hlog                  each sample's latency histograms as an HdrHistogram interval log (.hlog,
                          for HistogramLogAnalyzer; tags publish and e2e, values in µs)
  --histograms-json       each sample's latency histograms as the engine's raw buckets, JSON
  --format F              any of the above by name: csv, svg, png, json, omb, hlog, histograms-json
                          (repeatable or comma-separated)
  --out DIR               where the files go (default: the current directory)

Options of broker:
  --port P                node i listens on P + i - 1 (default 9092)
  --data-dir DIR          where the log lives (default $KBENCH_HOME/broker)
  --nodes N               1 to 5 nodes replicating among themselves (default 1)
  --fsync F               none (page cache, Kafka's default), batch (on disk before each ack),
                          interval:<ms>
  --processes             each node in its own OS process (so a signal can kill one)
  --no-auto-create-topics do not create a topic a client asks for (created on first use by default)
  --metrics HOST:PORT     serve every node's figures at GET /metrics for Prometheus (say 127.0.0.1:9644;
                          port 0 picks one, printed as "metrics <host>:<port>"); not with --processes

Options of agent:
  --listen H:P            where controllers connect (default 127.0.0.1:7755, this machine only; a load
                          machine listens with --listen 0.0.0.0:7755); port 0 picks a free port
  --token-file F          the token a controller must send (or KBENCH_AGENT_TOKEN); required
  --name N                the agent's name in a run's breakdown (default the host name)
  --allow H:P,...         send load only to these bootstrap servers (default: any the controller names)
  --tls-cert F --tls-key F  speak TLS (PEM files); controllers check it with the profile's agentTls

Options of agents:
  --count N               how many agents (1 to 256, the most one run takes): a StatefulSet of N pods
                          behind a headless Service; the --agents list for kbench run goes to stderr
  --name NAME             the StatefulSet's and Service's name (default kbench-agent; pods NAME-0 ...)
  --namespace NS          where they run (default default); the agents are NAME-i.NAME.NS.svc:PORT
  --image IMAGE           the image broker-native/agent.Containerfile built (default kbench-agent:latest)
  --port P                the port the agents listen on (default 7755)
  --token-secret NAME     the Secret holding the token under the key token (default NAME-token); you
                          create it, the manifest only mounts it (the kubectl command is printed)
  --tls-secret NAME       a kubernetes.io/tls Secret: the agents speak TLS with its certificate
  --cpu Q, --memory Q     each agent's requests (default 2 and 1Gi; memory is its limit too)
  --anti-affinity A       required (default: one agent per node) or preferred (spread where possible)
  --allow H:P,...         the agents send load only to these bootstrap servers

Environment:
  KBENCH_AGENT_TOKEN      the load agents' token (kbench agent, kbench run --agents)
  KBENCH_HOME             where the history (history.duckdb), profiles (profiles/) and the run slot
                          (run.lock: one run at a time on a machine) live; default ~/.kbench

Exit codes: 0 done, 1 the run failed, 2 bad usage, an invalid scenario or another run going (nothing ran), 3 the gate found a regression, 130 a reproduction stopped with Ctrl-C.
`;

/**
 * The part of USAGE about one command: its usage lines (with their continuations), the options of
 * run for the commands that take them, the environment and the exit codes.
 */
export function commandUsage(command: string): string {
  const lines = USAGE.split('\n');
  const own: string[] = [];
  let inCommand = false;
  for (const line of lines) {
    if (line.startsWith('  kbench '))
      inCommand = line.startsWith(`  kbench ${command} `) || line === `  kbench ${command}`;
    else if (!line.startsWith('      ')) inCommand = false;
    if (inCommand) own.push(line);
  }
  const section = (title: string) => {
    const start = lines.indexOf(title);
    if (start < 0) return [];
    const end = lines.indexOf('', start);
    return lines.slice(start, end < 0 ? undefined : end);
  };
  const parts = [['Usage:', ...own]];
  if (['run', 'sweep'].includes(command)) parts.push(section('Options of run:'));
  if (['run', 'gate'].includes(command)) parts.push(section('Options of gate:'));
  if (['compare', 'trend', 'export', 'broker', 'agent', 'agents'].includes(command))
    parts.push(section(`Options of ${command}:`));
  parts.push(section('Environment:'));
  parts.push(lines.filter((l) => l.startsWith('Exit codes:')));
  return `${parts.map((p) => p.join('\n')).join('\n\n')}\n`;
}
