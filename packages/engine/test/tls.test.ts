// TLS for real: one Apache Kafka 4.3.1 node with an SSL listener, an MTLS listener that requires a
// client certificate, and SASL_SSL, all on a throwaway CA made with the openssl CLI. kbench reaches
// it through named profiles as it would a cloud cluster: the TLS handshakes are the broker's and
// kafkajs's own, nothing is mocked. A second, unrelated CA stands in for a wrong `tls.ca`. The native
// engine (rustls, its own SASL) runs the same listeners, and its refusals get the same hints. The SASL
// listeners also take OAUTHBEARER with Kafka's unsecured-JWS validator, which accepts an unsigned JWT.
import { createPrivateKey } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  type ApacheKafka,
  makeTestCertificates,
  startApacheKafka,
  type TestCertificates,
  unsecuredJwt,
} from '@kbench/apache-kafka';
import { NativeProducer } from '@kbench/broker-native';
import { History } from '@kbench/history';
import { parseScenario, type RunRecord, type ScenarioInput } from '@kbench/schema';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeSecurity } from '../src/drivers/native.js';
import { ProfileStore, startRecordedRun } from '../src/index.js';
import { connectionHint, connectionSecurity } from '../src/security.js';

const USER = 'bench';
// Brackets, an equals sign and quotes at both ends: kafka-storage format --add-scram takes them all
// once kbench quotes the value (a comma it cannot take; that is refused up front, see below).
const PASSWORD = '"p]w=[x]y"';
const KEY_PASSPHRASE = 'key-pass-7f3a';

let workDir: string;
let certs: TestCertificates;
let wrong: TestCertificates;
let kafka: ApacheKafka;
let history: History;
let profiles: ProfileStore;
let admin: Admin;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-tls-'));
  [certs, wrong] = await Promise.all([
    makeTestCertificates(path.join(workDir, 'certs')),
    makeTestCertificates(path.join(workDir, 'wrong-certs'), { name: 'unrelated' }),
  ]);
  kafka = await startApacheKafka({
    dataDir: path.join(workDir, 'kafka'),
    tls: { cert: certs.serverCertFile, key: certs.serverKeyFile, ca: certs.caFile, mutualListener: true },
    sasl: {
      // Not PLAIN: its JAAS line cannot carry the quotes in PASSWORD (PLAIN is tested against the
      // bundled broker, broker-native/crates/loadgen/tests/secured.rs).
      mechanisms: ['SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'],
      users: [{ username: USER, password: PASSWORD }],
    },
  });
  history = await History.open(path.join(workDir, 'history.duckdb'));
  profiles = new ProfileStore(path.join(workDir, 'profiles'));
  profiles.save({ name: 'tls', bootstrap: kafka.sslBootstrap, tls: { ca: certs.caFile } });
  profiles.save({ name: 'wrong-ca', bootstrap: kafka.sslBootstrap, tls: { ca: wrong.caFile } });
  // The right CA, but a name the server certificate does not carry (it has 127.0.0.1 and localhost).
  profiles.save({
    name: 'wrong-name',
    bootstrap: kafka.sslBootstrap,
    tls: { ca: certs.caFile, servername: 'kafka.example.com' },
  });
  // Mutual TLS with the client certificate and key as PEM text (the CA as a path).
  profiles.save({
    name: 'mtls',
    bootstrap: kafka.mtlsBootstrap,
    tls: { ca: certs.caFile, cert: certs.clientCert, key: certs.clientKey },
  });
  profiles.save({ name: 'mtls-no-cert', bootstrap: kafka.mtlsBootstrap, tls: { ca: certs.caFile } });
  profiles.save({
    name: 'sasl-ssl',
    bootstrap: kafka.saslSslBootstrap,
    tls: { ca: certs.caFile },
    sasl: { mechanism: 'scram-sha-256', username: USER, password: PASSWORD },
  });
  profiles.save({
    name: 'sasl-ssl-512',
    bootstrap: kafka.saslSslBootstrap,
    tls: { ca: certs.caFile },
    sasl: { mechanism: 'scram-sha-512', username: USER, password: PASSWORD },
  });
  profiles.save({
    name: 'wrong-password',
    bootstrap: kafka.saslSslBootstrap,
    tls: { ca: certs.caFile },
    sasl: { mechanism: 'scram-sha-512', username: USER, password: 'not-the-password' },
  });
  // OAUTHBEARER: a token in a file, the same printed by a command, and one that expired a minute ago.
  const tokenFile = path.join(workDir, 'token.jwt');
  await writeFile(tokenFile, `${unsecuredJwt({ subject: USER })}\n`, { mode: 0o600 });
  const expiredFile = path.join(workDir, 'expired.jwt');
  await writeFile(expiredFile, unsecuredJwt({ subject: USER, lifetimeSeconds: -60 }), { mode: 0o600 });
  const oauth = (name: string, sasl: object) =>
    profiles.save({
      name,
      bootstrap: kafka.saslSslBootstrap,
      tls: { ca: certs.caFile },
      sasl: { mechanism: 'oauthbearer', ...sasl },
    });
  oauth('oauth-file', { tokenFile });
  oauth('oauth-command', { tokenCommand: `cat '${tokenFile}'` });
  oauth('oauth-expired', { tokenFile: expiredFile });
  // The wrong CA, accepted only because the profile says insecure.
  profiles.save({
    name: 'wrong-ca-insecure',
    bootstrap: kafka.sslBootstrap,
    tls: { ca: wrong.caFile, rejectUnauthorized: false },
  });
  // Mutual TLS with the client key encrypted (PKCS#8, AES-256) and its passphrase.
  const encryptedKey = createPrivateKey(certs.clientKey).export({
    type: 'pkcs8',
    format: 'pem',
    cipher: 'aes-256-cbc',
    passphrase: KEY_PASSPHRASE,
  }) as string;
  profiles.save({
    name: 'mtls-encrypted-key',
    bootstrap: kafka.mtlsBootstrap,
    tls: { ca: certs.caFile, cert: certs.clientCert, key: encryptedKey, passphrase: KEY_PASSPHRASE },
  });
  admin = new Kafka({
    clientId: 'test-admin',
    brokers: [kafka.bootstrap],
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
}, 600_000);

afterAll(async () => {
  await admin?.disconnect();
  await kafka?.stop();
  await rm(workDir, { recursive: true, force: true });
});

async function record(target: string, extra: ScenarioInput = {}): Promise<RunRecord> {
  const scenario = parseScenario({
    name: `tls ${target}`,
    target,
    driver: 'kafkajs',
    records: 2000,
    topics: { partitions: 2 },
    producers: { count: 1, messageSize: 200 },
    consumers: { count: 1 },
    ...extra,
  });
  const live = await startRecordedRun(scenario, { history, workDir, profiles });
  return live.done;
}

describe('TLS against Apache Kafka', () => {
  it('a profile with tls.ca runs a scenario through the SSL listener and stores it', async () => {
    const run = await record('tls');
    expect(run.status, String(run.error)).toBe('completed');
    expect(run.summary?.produced.records).toBe(2000);
    expect(run.summary?.consumed.records).toBeGreaterThan(0);
    const stored = await history.getRun(run.id);
    expect(stored?.status).toBe('completed');
    expect(stored?.environment).toMatchObject({
      target: 'external',
      profile: 'tls',
      security: 'SSL',
      bootstrap: kafka.sslBootstrap,
    });
    // DescribeCluster and ApiVersions went over TLS too: the broker advertises its SSL listener.
    expect(stored?.environment.cluster?.brokers).toEqual([
      { nodeId: 1, host: '127.0.0.1', port: kafka.nodes[0]?.sslPort },
    ]);
    expect(stored?.environment.cluster?.apiVersions.Fetch).toBe('4-18');
    expect((await history.getSamples(run.id)).length).toBeGreaterThan(0);
    expect((await admin.listTopics()).filter((t) => t.includes(run.id))).toEqual([]);
  });

  it('mutual TLS: a client certificate and key get through a listener with ssl.client.auth=required', async () => {
    const run = await record('mtls');
    expect(run.status, String(run.error)).toBe('completed');
    expect(run.summary?.produced.records).toBe(2000);
    expect(run.environment).toMatchObject({
      profile: 'mtls',
      security: 'SSL',
      bootstrap: kafka.mtlsBootstrap,
    });
    expect(run.environment.cluster?.brokers[0]?.port).toBe(kafka.nodes[0]?.mtlsPort);
    // The key never reaches the history: not in the stored run, not in the DuckDB file.
    const keyBody = certs.clientKey.split('\n')[1] as string;
    expect(keyBody.length).toBeGreaterThan(20);
    expect(JSON.stringify(await history.getRun(run.id))).not.toContain(keyBody);
    expect((await readFile(history.path)).includes(Buffer.from(keyBody))).toBe(false);
  });

  it('the same listener refuses a client without a certificate, and the error says what to set', async () => {
    const run = await record('mtls-no-cert', { records: 100, consumers: { count: 0 } });
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/certificate/i);
    expect(run.error).toMatch(/hint: the listener wants a client certificate: set tls\.cert and tls\.key/);
  });

  it('a profile with the wrong CA fails, naming certificate verification and tls.ca', async () => {
    const run = await record('wrong-ca', { records: 100, consumers: { count: 0 } });
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/certificate/i);
    expect(run.error).toMatch(/verify|self[- ]signed|issuer/i);
    expect(run.error).toMatch(/hint: the broker's certificate is not signed by a CA the profile trusts/);
    expect((await history.getRun(run.id))?.status).toBe('failed');
  });

  it('a server name the certificate does not carry fails the hostname check', async () => {
    const run = await record('wrong-name', { records: 100, consumers: { count: 0 } });
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/does not match certificate's altnames/);
    expect(run.error).toContain('kafka.example.com');
    expect(run.error).toMatch(/hint: .*set tls\.servername/);
  });

  it('SASL_SSL: SCRAM-SHA-256 over TLS with a password holding ], [, = and quotes', async () => {
    const run = await record('sasl-ssl');
    expect(run.status, String(run.error)).toBe('completed');
    expect(run.summary?.produced.records).toBe(2000);
    expect(run.environment).toMatchObject({
      security: 'SASL_SSL scram-sha-256',
      bootstrap: kafka.saslSslBootstrap,
    });
    expect(JSON.stringify(await history.getRun(run.id))).not.toContain(PASSWORD);
  });
});

/** The error the native engine's producer fails to start with over a profile's security, as a run words it. */
async function nativeRefusal(profile: string, bootstrap: string | null): Promise<string> {
  if (!bootstrap) throw new Error(`no listener for ${profile}`);
  const stored = profiles.get(profile);
  if (!stored) throw new Error(`no profile ${profile}`);
  const security = nativeSecurity(connectionSecurity(stored));
  const started = NativeProducer.start({
    bootstrap: bootstrap.split(','),
    topics: ['never-created'],
    acks: 1,
    messageSize: 10,
    keys: 'none',
    compression: 'none',
    batchSize: 16384,
    lingerMs: 0,
    maxInFlight: 1,
    idempotence: false,
    records: 1,
    ...(security ? { security } : {}),
  });
  const error = await started.then(
    async (p) => {
      await p.stop();
      return 'started';
    },
    (err: Error) => err.message,
  );
  const hint = connectionHint(error);
  return hint ? `${error} (hint: ${hint})` : error;
}

describe('the native engine over TLS and SASL against Apache Kafka', () => {
  it('SASL_SSL with SCRAM-SHA-512: a native run completes and stores its security', async () => {
    const run = await record('sasl-ssl-512', { driver: 'native' });
    expect(run.status, String(run.error)).toBe('completed');
    expect(run.summary?.produced.records).toBe(2000);
    expect(run.summary?.consumed.records).toBeGreaterThan(0);
    expect(run.environment).toMatchObject({
      driver: 'native',
      security: 'SASL_SSL scram-sha-512',
      bootstrap: kafka.saslSslBootstrap,
    });
    expect(JSON.stringify(await history.getRun(run.id))).not.toContain(PASSWORD);
  });

  it('mutual TLS: a native run with a client certificate completes on ssl.client.auth=required', async () => {
    const run = await record('mtls', { driver: 'native' });
    expect(run.status, String(run.error)).toBe('completed');
    expect(run.summary?.produced.records).toBe(2000);
    expect(run.summary?.consumed.records).toBeGreaterThan(0);
    expect(run.environment).toMatchObject({ driver: 'native', security: 'SSL' });
  });

  it('a wrong CA: the native engine names the unknown issuer, with the tls.ca hint', async () => {
    const error = await nativeRefusal('wrong-ca', kafka.sslBootstrap);
    expect(error).toMatch(/invalid peer certificate: (UnknownIssuer|BadSignature)/);
    expect(error).toMatch(/hint: the broker's certificate is not signed by a CA the profile trusts/);
  });

  it('a wrong host name: the native engine names it, with the tls.servername hint', async () => {
    const error = await nativeRefusal('wrong-name', kafka.sslBootstrap);
    expect(error).toMatch(/certificate not valid for name "kafka\.example\.com"/);
    expect(error).toMatch(/hint: .*set tls\.servername/);
  });

  it('no client certificate on the MTLS listener: the native engine gives the tls.cert hint', async () => {
    const error = await nativeRefusal('mtls-no-cert', kafka.mtlsBootstrap);
    expect(error).toMatch(/certificate/i);
    expect(error).toMatch(/hint: the listener wants a client certificate: set tls\.cert and tls\.key/);
  });

  it('a wrong password: the native engine gives SASL_AUTHENTICATION_FAILED and the sasl hint', async () => {
    const error = await nativeRefusal('wrong-password', kafka.saslSslBootstrap);
    expect(error).toMatch(/SASL_AUTHENTICATION_FAILED/);
    expect(error).toMatch(/hint: check sasl\.username, sasl\.password and sasl\.mechanism/);
    expect(error).not.toContain('not-the-password');
  });
});

describe('OAUTHBEARER against Apache Kafka (its unsecured-JWS validator), both drivers', () => {
  it('kafkajs: a token file gets a run through SASL_SSL', async () => {
    const run = await record('oauth-file');
    expect(run.status, String(run.error)).toBe('completed');
    expect(run.summary?.produced.records).toBe(2000);
    expect(run.summary?.consumed.records).toBeGreaterThan(0);
    expect(run.environment).toMatchObject({ driver: 'kafkajs', security: 'SASL_SSL oauthbearer' });
  });

  it('native: a token command gets a run through SASL_SSL', async () => {
    const run = await record('oauth-command', { driver: 'native' });
    expect(run.status, String(run.error)).toBe('completed');
    expect(run.summary?.produced.records).toBe(2000);
    expect(run.summary?.consumed.records).toBeGreaterThan(0);
    expect(run.environment).toMatchObject({ driver: 'native', security: 'SASL_SSL oauthbearer' });
  });

  it('native: the token file too', async () => {
    const run = await record('oauth-file', { driver: 'native', consumers: { count: 0 } });
    expect(run.status, String(run.error)).toBe('completed');
  });

  it('kafkajs: an expired token fails the run with the token hint', async () => {
    const run = await record('oauth-expired', { records: 100, consumers: { count: 0 } });
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/SASL OAUTHBEARER authentication failed/);
    expect(run.error).toMatch(/hint: the broker refused the OAUTHBEARER token: check what sasl\.tokenFile/);
  });

  it('native: an expired token fails the start with the token hint', async () => {
    const error = await nativeRefusal('oauth-expired', kafka.saslSslBootstrap);
    expect(error).toMatch(/OAUTHBEARER authentication failed: SASL_AUTHENTICATION_FAILED/);
    expect(error).toMatch(/hint: the broker refused the OAUTHBEARER token/);
  });
});

describe('the native engine: insecure and an encrypted client key', () => {
  it('a certificate the given CA did not sign is accepted with insecure (and refused without, above)', async () => {
    expect(await nativeRefusal('wrong-ca', kafka.sslBootstrap)).toMatch(/invalid peer certificate/);
    const run = await record('wrong-ca-insecure', { driver: 'native' });
    expect(run.status, String(run.error)).toBe('completed');
    expect(run.summary?.produced.records).toBe(2000);
  });

  it('mutual TLS with an encrypted client key and its passphrase', async () => {
    const run = await record('mtls-encrypted-key', { driver: 'native' });
    expect(run.status, String(run.error)).toBe('completed');
    expect(run.summary?.produced.records).toBe(2000);
    expect(run.summary?.consumed.records).toBeGreaterThan(0);
    expect(JSON.stringify(await history.getRun(run.id))).not.toContain(KEY_PASSPHRASE);
  });
});

describe('SCRAM users the managed Kafka cannot take', () => {
  it('a comma in a password is refused before anything starts, naming the field', async () => {
    const dataDir = path.join(workDir, 'never');
    await expect(
      startApacheKafka({ dataDir, sasl: { users: [{ username: USER, password: 'a,b' }] } }),
    ).rejects.toThrow(/sasl\.users\[0\]\.password: must not contain a comma/);
    await expect(
      startApacheKafka({
        dataDir,
        sasl: {
          users: [
            { username: 'ok', password: 'x' },
            { username: 'a,b', password: 'x' },
          ],
        },
      }),
    ).rejects.toThrow(/sasl\.users\[1\]\.username: must not contain a comma/);
    // Refused before anything was written.
    await expect(readFile(path.join(dataDir, 'server.properties'))).rejects.toThrow(/ENOENT/);
  });
});
