// The throwaway TLS material made with the openssl CLI: the chain verifies, the names clients dial
// are in the server certificate, each certificate is for its purpose, keys are private files.
import { execFileSync } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MissingProgramError, makeTestCertificates, type TestCertificates } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'kbench-certs-'));
let certs: TestCertificates;
let other: TestCertificates;

beforeAll(async () => {
  [certs, other] = await Promise.all([
    makeTestCertificates(join(dir, 'a')),
    makeTestCertificates(join(dir, 'b'), { name: 'other' }),
  ]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('makeTestCertificates', () => {
  it('signs a server certificate for 127.0.0.1 and localhost with its own CA', () => {
    const ca = new X509Certificate(certs.ca);
    const server = new X509Certificate(certs.serverCert);
    expect(ca.ca).toBe(true);
    expect(ca.subject).toBe('CN=kbench test CA');
    expect(server.ca).toBe(false);
    expect(server.checkIssued(ca)).toBe(true);
    expect(server.verify(ca.publicKey)).toBe(true);
    expect(server.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(server.checkHost('localhost')).toBe('localhost');
    expect(server.checkHost('example.com')).toBeUndefined();
    expect(server.keyUsage).toContain('1.3.6.1.5.5.7.3.1'); // serverAuth
    // openssl agrees, with the purpose checked.
    const verify = execFileSync('openssl', [
      'verify',
      '-CAfile',
      certs.caFile,
      '-purpose',
      'sslserver',
      certs.serverCertFile,
    ]);
    expect(verify.toString()).toContain(': OK');
  });

  it('signs a client certificate for mutual TLS', () => {
    const client = new X509Certificate(certs.clientCert);
    expect(client.verify(new X509Certificate(certs.ca).publicKey)).toBe(true);
    expect(client.keyUsage).toContain('1.3.6.1.5.5.7.3.2'); // clientAuth
    expect(client.subject).toBe('CN=kbench-client');
  });

  it('writes unencrypted PKCS#8 keys that match their certificates, readable by the owner only', () => {
    for (const [keyPem, certPem, file] of [
      [certs.serverKey, certs.serverCert, certs.serverKeyFile],
      [certs.clientKey, certs.clientCert, certs.clientKeyFile],
    ] as const) {
      expect(keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
      const key = createPrivateKey(keyPem);
      expect(new X509Certificate(certPem).checkPrivateKey(key)).toBe(true);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    }
  });

  it('two sets have unrelated CAs', () => {
    const server = new X509Certificate(certs.serverCert);
    expect(server.verify(new X509Certificate(other.ca).publicKey)).toBe(false);
    expect(new X509Certificate(other.ca).subject).toBe('CN=other CA');
  });

  it('names openssl when it is missing', async () => {
    await expect(makeTestCertificates(join(dir, 'c'), { openssl: 'no-such-openssl-kbench' })).rejects.toThrow(
      MissingProgramError,
    );
  });
});
