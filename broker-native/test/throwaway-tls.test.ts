// throwawayTls: the CA and server certificate a run's secured bundled listener uses. Node's own X.509
// reads them: the certificate is signed by the CA, names the hosts asked for, and the key is its key.
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { throwawayTls } from '../index.js';

describe('throwawayTls', () => {
  it('makes a CA and a certificate it signed for the hosts asked, with the matching key', () => {
    const made = throwawayTls(['127.0.0.1', 'localhost']);
    const ca = new X509Certificate(made.ca);
    const cert = new X509Certificate(made.cert);
    expect(ca.ca).toBe(true);
    expect(cert.ca).toBe(false);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.checkHost('localhost')).toBe('localhost');
    expect(cert.checkHost('kafka.example.com')).toBeUndefined();
    expect(cert.checkPrivateKey(createPrivateKey(made.key))).toBe(true);
    expect(made.key).toMatch(/^-----BEGIN PRIVATE KEY-----/);
  });

  it('makes a new CA and key each time', () => {
    const [a, b] = [throwawayTls(['localhost']), throwawayTls(['localhost'])];
    expect(a.ca).not.toBe(b.ca);
    expect(createPublicKey(a.key).export({ format: 'pem', type: 'spki' })).not.toBe(
      createPublicKey(b.key).export({ format: 'pem', type: 'spki' }),
    );
  });

  it('refuses no hosts, too many and an empty one, naming the argument', () => {
    expect(() => throwawayTls([])).toThrow(
      'throwawayTls: hosts: give 1 to 16 host names or addresses (got 0)',
    );
    expect(() => throwawayTls(Array.from({ length: 17 }, (_, i) => `h${i}`))).toThrow(/got 17/);
    expect(() => throwawayTls(['localhost', ''])).toThrow(
      'throwawayTls: hosts[1]: must be a host name or an IP address of 1 to 253 characters',
    );
  });
});
