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
    expect(issues({ name: 'x', bootstrap: 9092 })).toEqual([
      { path: 'bootstrap', message: 'must be a string (got 9092)' },
    ]);
    expect(issues({ name: 'x', bootstrap: 'h:1', tls: { cert: '/c.pem' } })).toEqual([
      { path: 'tls.key', message: 'a client certificate needs both tls.cert and tls.key' },
    ]);
    expect(issues({ name: 'x', bootstrap: 'h:1', sasl: { mechanism: 'plain', username: 'u' } })).toEqual([
      { path: 'sasl.password', message: 'is required for plain (a non-empty password)' },
    ]);
    expect(issues({ name: 'x', bootstrap: 'h:1', extra: 1 })[0]).toEqual({
      path: 'extra',
      message:
        'unknown field; allowed fields here: name, description, bootstrap, tls, sasl, maxRate, agents, agentToken, agentTokenFile, agentTls, metrics',
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

describe("a profile's metrics endpoints", () => {
  it('takes http(s) URLs with a kind (auto by default) and a node name', () => {
    const p = parseProfile({
      name: 'rp',
      bootstrap: 'rp-1:9092',
      metrics: [
        { url: 'http://rp-1:9644/public_metrics', kind: 'redpanda', node: 'rp-1' },
        { url: 'https://k:7071/' },
      ],
    });
    expect(p.metrics).toEqual([
      { url: 'http://rp-1:9644/public_metrics', kind: 'redpanda', node: 'rp-1' },
      { url: 'https://k:7071/', kind: 'auto' },
    ]);
    expect(maskProfile(p).metrics).toEqual(p.metrics);
  });

  it('names the field of each mistake: scheme, credentials, kind, unknown fields', () => {
    let issues: { path: string; message: string }[] = [];
    try {
      parseProfile({
        name: 'bad',
        bootstrap: 'k:9092',
        metrics: [
          { url: 'file:///etc/passwd' },
          { url: 'http://user:pw@k:7071/metrics' },
          { url: 'http://k:7071/metrics', kind: 'prometheus' },
          { url: 'http://k:7071/metrics', every: '1s' },
          { url: 'not a url' },
        ],
      });
    } catch (err) {
      issues = (err as ProfileError).issues;
    }
    expect(issues).toEqual([
      { path: 'metrics[0].url', message: 'must be an http:// or https:// URL (got file)' },
      {
        path: 'metrics[1].url',
        message: 'must not hold a user name or password (a run stores its endpoints)',
      },
      {
        path: 'metrics[2].kind',
        message: 'must be one of auto, kafka-jmx, redpanda, kbench (got "prometheus")',
      },
      { path: 'metrics[3].every', message: 'unknown field; allowed fields here: url, kind, node' },
      {
        path: 'metrics[4].url',
        message:
          'must be an http:// or https:// URL such as http://broker-1:9644/public_metrics (got "not a url")',
      },
    ]);
  });
});
