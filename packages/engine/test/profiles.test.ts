// Target profiles on disk (real files, real modes) and what the engine accepts or refuses with them,
// before anything connects.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ProfileError, parseScenario } from '@kbench/schema';
import { afterAll, describe, expect, it } from 'vitest';
import {
  connectionSecurity,
  ProfileExistsError,
  ProfileStore,
  planRun,
  unsupportedIssues,
} from '../src/index.js';

const home = mkdtempSync(path.join(os.tmpdir(), 'kbench-profiles-'));
const store = new ProfileStore(path.join(home, 'profiles'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

const scram = {
  name: 'shared',
  bootstrap: 'kafka-1.example:9093,kafka-2.example:9093',
  sasl: { mechanism: 'scram-sha-512', username: 'bench', password: 'p4ss-w0rd!' },
  maxRate: 5000,
};

describe('the profile store', () => {
  it('writes a profile readable by its owner only, in a folder only its owner may enter', () => {
    const saved = store.save(scram);
    expect(saved.sasl).toMatchObject({ password: 'p4ss-w0rd!' });
    expect(statSync(store.dir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(store.dir, 'shared.json')).mode & 0o777).toBe(0o600);
    expect(store.get('shared')).toEqual(saved);
    expect(store.list().map((p) => p.name)).toEqual(['shared']);
  });

  it('refuses to replace a profile unless asked', () => {
    expect(() => store.save(scram)).toThrow(ProfileExistsError);
    const replaced = store.save({ ...scram, maxRate: 100 }, { replace: true });
    expect(replaced.maxRate).toBe(100);
  });

  it('names every bad field', () => {
    let error: unknown;
    try {
      store.save({
        name: 'kafka',
        bootstrap: 'nohost',
        tls: { ca: 'relative/ca.pem', cert: '/abs/cert.pem', color: 'blue' },
        sasl: { mechanism: 'gssapi', username: '', password: 'x' },
        maxRate: -1,
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ProfileError);
    const paths = (error as ProfileError).issues.map((i) => i.path).sort();
    expect(paths).toEqual(
      ['bootstrap', 'maxRate', 'name', 'sasl.mechanism', 'sasl.username', 'tls.ca', 'tls.color'].sort(),
    );
    expect((error as ProfileError).message).toContain(
      'sasl.mechanism: must be one of plain, scram-sha-256, scram-sha-512',
    );
    expect((error as ProfileError).message).not.toContain('p4ss');
  });

  it('a broken profile file is an error that names the file and quotes none of it', () => {
    writeFileSync(path.join(store.dir, 'broken.json'), '{"name": "broken", "password": "hunter2" oops', {
      mode: 0o600,
    });
    expect(() => store.get('broken')).toThrow(/broken\.json: cannot read the profile/);
    try {
      store.get('broken');
    } catch (err) {
      expect(String(err)).not.toContain('hunter2');
    }
    expect(store.remove('broken')).toBe(true);
    expect(store.remove('broken')).toBe(false);
  });

  it('reads TLS files when clients need them', () => {
    const ca = path.join(home, 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    store.save({ name: 'tls', bootstrap: 'b:9093', tls: { ca, rejectUnauthorized: false } });
    const security = connectionSecurity(store.get('tls')!);
    expect(security?.tls?.ca).toBe(readFileSync(ca, 'utf8'));
    expect(security?.tls?.rejectUnauthorized).toBe(false);
    expect(security?.sasl).toBeUndefined();
    expect(connectionSecurity(store.save({ name: 'plain', bootstrap: 'b:9092' }))).toBeUndefined();
  });

  it('refuses a TLS file that is a device or too large for a PEM file, unread', () => {
    store.save({ name: 'zero', bootstrap: 'b:9093', tls: { ca: '/dev/zero', rejectUnauthorized: true } });
    expect(() => connectionSecurity(store.get('zero')!)).toThrow('tls.ca: /dev/zero is not a regular file');
    const big = path.join(home, 'big.pem');
    writeFileSync(big, Buffer.alloc(5 * 1024 * 1024, 65));
    store.save({ name: 'big', bootstrap: 'b:9093', tls: { ca: big, rejectUnauthorized: true } });
    expect(() => connectionSecurity(store.get('big')!)).toThrow(/more than a PEM file holds/);
  });
});

describe('what the engine accepts with a profile', () => {
  const scenario = (extra: Record<string, unknown>) =>
    parseScenario({ target: 'shared', duration: '10s', ...extra });

  it('an unknown profile is refused on the target field', () => {
    const issues = unsupportedIssues(parseScenario({ target: 'nowhere' }), { profiles: store });
    expect(issues).toEqual([
      { path: 'target', message: expect.stringContaining('no profile named "nowhere"') },
    ]);
  });

  it('both drivers accept a profile with TLS or SASL (the native engine speaks them too)', () => {
    expect(unsupportedIssues(scenario({ driver: 'native' }), { profiles: store })).toEqual([]);
    expect(unsupportedIssues(scenario({ driver: 'kafkajs' }), { profiles: store })).toEqual([]);
  });

  it('a fixed rate above the ceiling is refused; the lower of maxRate and --max-rate applies', () => {
    // maxRate is 100 since the replace above.
    const issues = unsupportedIssues(scenario({ producers: { rate: 150 } }), { profiles: store });
    expect(issues.map((i) => i.path)).toEqual(['producers.rate']);
    expect(issues[0]?.message).toContain(
      'above the rate ceiling of 100 records/s (profile "shared" maxRate)',
    );
    expect(unsupportedIssues(scenario({ producers: { rate: 80 } }), { profiles: store })).toEqual([]);
    const flag = unsupportedIssues(scenario({ producers: { rate: 80 } }), { profiles: store, maxRate: 50 });
    expect(flag[0]?.message).toContain('ceiling of 50 records/s (profile "shared" maxRate and --max-rate)');
  });

  it('a dry run shows what would be created and sent, with max capped at the ceiling', () => {
    const plan = planRun(
      scenario({
        topics: {
          partitions: 12,
          replicationFactor: 3,
          minInsyncReplicas: 2,
          config: { 'retention.ms': 60000 },
        },
        producers: { rate: 'max', messageSize: '1KB' },
        warmup: '2s',
      }),
      { profiles: store },
    );
    expect(plan.target).toEqual({
      name: 'shared',
      kind: 'external',
      bootstrap: scram.bootstrap,
      profile: 'shared',
      security: 'SASL_PLAINTEXT scram-sha-512',
      nodes: null,
    });
    expect(plan.topics).toMatchObject({
      pattern: 'kbench-<run id>-<n>',
      partitions: 12,
      replicationFactor: 3,
      configs: { 'min.insync.replicas': '2', 'retention.ms': '60000' },
      afterRun: 'deleted',
    });
    expect(plan.load).toMatchObject({ rate: 'max', targetRate: 100, rateCeiling: 100, durationMs: 10_000 });
    expect(plan.load.estimatedRecords).toBe(1000);
    expect(plan.load.estimatedBytes).toBe(1000 * 1024);
    expect(JSON.stringify(plan)).not.toContain('p4ss');
  });
});
