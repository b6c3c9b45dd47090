import { describe, expect, it } from 'vitest';
import {
  describeSecurity,
  maskProfile,
  type ProfileError,
  parseProfile,
  securityProtocol,
  targetKind,
} from '../src/index.js';

const PEM_KEY = '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n';

describe('target profiles', () => {
  it('fills defaults: tls true means TLS with certificate checks', () => {
    const p = parseProfile({ name: 'cloud', bootstrap: 'b1.example:9093', tls: true });
    expect(p).toEqual({
      name: 'cloud',
      description: '',
      bootstrap: 'b1.example:9093',
      tls: { rejectUnauthorized: true },
    });
    expect(parseProfile({ name: 'lan', bootstrap: 'h:9092', tls: false }).tls).toBeUndefined();
    expect(securityProtocol(p)).toBe('SSL');
  });

  it('names the field of each mistake', () => {
    const issues = (input: unknown) => {
      try {
        parseProfile(input);
        return [];
      } catch (err) {
        return (err as ProfileError).issues;
      }
    };
    expect(issues({ name: 'bundled', bootstrap: 'h:1' })).toEqual([
      { path: 'name', message: 'must not be bundled or kafka (those are built-in targets)' },
    ]);
    expect(issues({ name: 'a:b', bootstrap: 'h:1' })[0]?.path).toBe('name');
    expect(issues({ name: 'x' })).toEqual([{ path: 'bootstrap', message: 'is required (string)' }]);
    expect(issues({ name: 'x', bootstrap: 'h:1', tls: { cert: '/c.pem' } })).toEqual([
      { path: 'tls.key', message: 'a client certificate needs both tls.cert and tls.key' },
    ]);
    expect(issues({ name: 'x', bootstrap: 'h:1', sasl: { mechanism: 'plain', username: 'u' } })).toEqual([
      { path: 'sasl.password', message: 'is required for plain (a non-empty password)' },
    ]);
    expect(issues({ name: 'x', bootstrap: 'h:1', extra: 1 })[0]).toEqual({
      path: 'extra',
      message:
        'unknown field; allowed fields here: name, description, bootstrap, tls, sasl, maxRate, agents, agentToken, agentTokenFile, agentTls',
    });
    expect(issues([])).toEqual([{ path: '', message: 'a profile must be an object of fields' }]);
  });

  it('masks every secret and keeps what is not one', () => {
    const p = parseProfile({
      name: 'prod',
      bootstrap: 'h:9093',
      tls: { ca: '/etc/ca.pem', cert: '/etc/c.pem', key: PEM_KEY, passphrase: 'pp' },
      sasl: { mechanism: 'scram-sha-256', username: 'alice', password: 'secret' },
    });
    const masked = maskProfile(p);
    expect(masked.sasl).toEqual({ mechanism: 'scram-sha-256', username: 'alice', password: '********' });
    expect(masked.tls).toMatchObject({
      ca: '/etc/ca.pem',
      cert: '/etc/c.pem',
      key: '(PEM key, hidden)',
      passphrase: '********',
    });
    expect(JSON.stringify(masked)).not.toMatch(/secret|pp"|MIIE/);
    expect(p.sasl).toMatchObject({ password: 'secret' });
    expect(describeSecurity(p)).toBe('SASL_SSL scram-sha-256');
  });

  it('tells targets apart', () => {
    expect(['bundled', 'kafka', 'h:9092,g:9093', 'prod'].map(targetKind)).toEqual([
      'bundled',
      'kafka',
      'bootstrap',
      'profile',
    ]);
  });
});
