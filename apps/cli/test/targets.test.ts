// Targets from the command line: profiles (add, list, show, remove), dry runs, the checks that refuse
// a run before it starts, and, against a real Apache Kafka with a SASL/SCRAM listener, a run through
// a profile whose password must then appear in nothing kbench prints, stores or exports; and one
// scenario run on two targets in turn and compared.
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ApacheKafka, startApacheKafka } from '@kbench/apache-kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKbench } from './helpers.js';

const PASSWORD = 'Cli-pw-9c1e-secret';
let home: string;
let scenario: string;

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-cli-targets-'));
  scenario = path.join(home, 'small.yaml');
  await writeFile(
    scenario,
    'name: small\ndriver: kafkajs\nrecords: 2000\ntopics: { partitions: 2 }\nproducers: { count: 1, messageSize: 100 }\n',
  );
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

function kbench(args: string[], timeoutMs?: number) {
  return runKbench(home, args, timeoutMs);
}

describe('kbench profile', () => {
  it('adds a profile readable by its owner only and shows it with its secrets masked', async () => {
    process.env.KBENCH_TEST_PASSWORD = 'Profile-pw-1';
    const add = await kbench([
      'profile',
      'add',
      'far',
      '--bootstrap',
      'far.example:9093',
      '--sasl',
      'scram-sha-512',
      '--username',
      'bench',
      '--password-env',
      'KBENCH_TEST_PASSWORD',
      '--max-rate',
      '300',
    ]);
    expect(add.code, add.stderr).toBe(0);
    expect((await stat(path.join(home, 'profiles'))).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(home, 'profiles', 'far.json'))).mode & 0o777).toBe(0o600);
    const show = await kbench(['profile', 'show', 'far']);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/sasl\.password\s+\*{8}/);
    expect(show.stdout).not.toContain('Profile-pw-1');
    const list = await kbench(['profile', 'list', '--json']);
    expect(JSON.parse(list.stdout)).toEqual([
      {
        name: 'far',
        description: '',
        bootstrap: 'far.example:9093',
        sasl: { mechanism: 'scram-sha-512', username: 'bench', password: '********' },
        maxRate: 300,
      },
    ]);
  });

  it('bad usage exits 2 with a message naming the problem', async () => {
    const cases: [string[], string][] = [
      [['profile'], 'name a subcommand'],
      [['profile', 'frob'], 'unknown subcommand "frob"'],
      [['profile', 'add', 'x'], '--bootstrap host:port[,host:port] is required'],
      [['profile', 'add', 'far', '--bootstrap', 'h:1'], 'exists already; add --replace'],
      [
        ['profile', 'add', 'x', '--bootstrap', 'h:1', '--sasl', 'plain', '--username', 'u'],
        '--sasl needs a password',
      ],
      [['profile', 'add', 'x', '--bootstrap', 'h:1', '--ca', '/nonexistent/ca.pem'], '--ca: no file'],
      [['profile', 'add', 'kafka', '--bootstrap', 'nohost'], 'name: must not be bundled or kafka'],
      [['profile', 'show', 'nope'], 'no profile "nope"'],
      [['profile', 'remove'], 'give one profile name'],
    ];
    for (const [args, message] of cases) {
      const r = await kbench(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(message);
    }
  });

  it('run refuses what the profile cannot do, before connecting', async () => {
    // The native engine speaks TLS and SASL: a SASL profile is no longer refused for it.
    const native = await kbench(['run', scenario, '--target', 'far', '--set', 'driver=native', '--dry-run']);
    expect(native.code, native.stderr).toBe(0);
    const fast = await kbench(['run', scenario, '--target', 'far', '--set', 'producers.rate=1000']);
    expect(fast.code).toBe(2);
    expect(fast.stderr).toContain(
      'producers.rate: 1000 records/s is above the rate ceiling of 300 records/s',
    );
    const unknown = await kbench(['run', scenario, '--target', 'nowhere']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('target: no profile named "nowhere"');
    const bad = await kbench(['run', scenario, '--max-rate', 'lots']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-rate must be a number');
  });

  it('--dry-run prints what would be created and sent, and exits 0', async () => {
    const text = await kbench(['run', scenario, '--target', 'far', '--dry-run']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('dry run: nothing is created or sent');
    expect(text.stdout).toMatch(
      /target\s+far: external, profile far, SASL_PLAINTEXT scram-sha-512 at far\.example:9093/,
    );
    expect(text.stdout).toMatch(/rate\s+max, capped at the ceiling: 300 rec\/s/);
    const json = await kbench([
      'run',
      scenario,
      '--target',
      'far',
      '--dry-run',
      '--json',
      '--max-rate',
      '100',
      '--keep-topics',
    ]);
    const plan = JSON.parse(json.stdout);
    expect(plan.topics).toMatchObject({ partitions: 2, replicationFactor: 1, afterRun: 'kept' });
    expect(plan.load).toMatchObject({
      records: 2000,
      rateCeiling: 100,
      estimatedRecords: 2000,
      estimatedBytes: 200_000,
    });
    expect(json.stdout + text.stdout).not.toContain('Profile-pw-1');
    expect((await kbench(['profile', 'remove', 'far'])).code).toBe(0);
  });
});

describe('against Apache Kafka with a SASL/SCRAM listener', () => {
  let kafka: ApacheKafka;

  beforeAll(async () => {
    kafka = await startApacheKafka({
      dataDir: path.join(home, 'kafka'),
      sasl: { mechanisms: ['SCRAM-SHA-256'], users: [{ username: 'bench', password: PASSWORD }] },
    });
    process.env.KBENCH_TEST_PASSWORD = PASSWORD;
    const add = await kbench([
      'profile',
      'add',
      'scram',
      '--bootstrap',
      kafka.saslBootstrap as string,
      '--sasl',
      'scram-sha-256',
      '--username',
      'bench',
      '--password-env',
      'KBENCH_TEST_PASSWORD',
    ]);
    expect(add.code, add.stderr).toBe(0);
    delete process.env.KBENCH_TEST_PASSWORD;
  }, 600_000);

  afterAll(async () => {
    await kafka?.stop();
  });

  it('stores the run, and neither the history nor any export holds the password', async () => {
    const run = await kbench(['run', scenario, '--target', 'scram', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const record = JSON.parse(run.stdout);
    expect(record.status).toBe('completed');
    expect(record.environment).toMatchObject({ profile: 'scram', security: 'SASL_PLAINTEXT scram-sha-256' });
    expect(record.environment.cluster.brokers).toHaveLength(1);

    const out = path.join(home, 'export');
    const exported = await kbench(['export', record.id, '--csv', '--json', '--omb', '--out', out]);
    expect(exported.code, exported.stderr).toBe(0);
    const texts = [run.stdout, run.stderr, exported.stdout, exported.stderr];
    for (const args of [
      ['show', record.id, '--json'],
      ['show', record.id],
      ['list', '--json'],
      ['compare', record.id, record.id],
    ]) {
      const r = await kbench(args);
      texts.push(r.stdout, r.stderr);
    }
    for (const file of await readdir(out)) texts.push(await readFile(path.join(out, file), 'utf8'));
    expect(texts.join('\n')).toContain('scram');
    expect(texts.join('\n')).not.toContain(PASSWORD);
    const duckdb = await readFile(path.join(home, 'history.duckdb'));
    expect(duckdb.includes(Buffer.from(PASSWORD))).toBe(false);
  }, 300_000);

  it('runs one scenario on two targets in turn and compares them', async () => {
    const r = await kbench(['run', scenario, '--target', 'bundled', '--target', 'scram'], 300_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('target 1/2: small -> bundled');
    expect(r.stderr).toContain('target 2/2: small -> scram');
    expect(r.stdout).toMatch(/target\s+bundled\s+external/);
    expect(r.stdout).toMatch(/scenario settings that differ:\n.*\ntarget\s+bundled\s+scram/);
    expect(r.stdout).toMatch(
      /produced rec\/s against the first target:\n {2}scram \(\w+\) \/ bundled \(\w+\): [\d.]+x/,
    );
    expect(r.stdout).not.toContain(PASSWORD);
  }, 300_000);
});
