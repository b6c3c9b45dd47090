// The bundled target's secured listener as a scenario writes it (cluster.security): absent by default,
// a knob like any other, for the bundled target only.
import { describe, expect, it } from 'vitest';
import { parseScenario, ScenarioError, setKnob } from '../src/index.js';

describe("the bundled target's secured listener (cluster.security)", () => {
  it('is absent unless asked for: a plaintext listener, as before', () => {
    expect(parseScenario({}).cluster.security).toBeUndefined();
  });

  it('fills what is left out: no TLS, no SASL', () => {
    expect(parseScenario({ cluster: { security: { sasl: 'scram-sha-512' } } }).cluster.security).toEqual({
      tls: false,
      sasl: 'scram-sha-512',
    });
    expect(parseScenario({ cluster: { security: { tls: true } } }).cluster.security).toEqual({
      tls: true,
      sasl: 'none',
    });
  });

  it('is a knob --set and sweeps can name', () => {
    const raw = setKnob(setKnob({}, 'cluster.security.tls', true), 'cluster.security.sasl', 'plain');
    expect(parseScenario(raw).cluster.security).toEqual({ tls: true, sasl: 'plain' });
  });

  it('refuses a mechanism the bundled broker has not, listing those it has', () => {
    expect(() => parseScenario({ cluster: { security: { sasl: 'oauthbearer' } } })).toThrow(
      'cluster.security.sasl: must be one of none, plain, scram-sha-256, scram-sha-512 (got "oauthbearer")',
    );
    expect(() => parseScenario({ cluster: { security: { tls: true, user: 'x' } } })).toThrow(ScenarioError);
  });

  it('belongs to the bundled target only', () => {
    expect(() => parseScenario({ target: 'h:9092', cluster: { security: { tls: true } } })).toThrow(
      "cluster.security: only the bundled target takes cluster.security (target is h:9092); a profile carries an external cluster's tls and sasl",
    );
  });
});
