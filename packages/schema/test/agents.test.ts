import { describe, expect, it } from 'vitest';
import {
  agentLossWarning,
  maskProfile,
  ProfileError,
  parseAgentsList,
  parseProfile,
  parseScenario,
  ScenarioError,
} from '../src/index.js';
import { agentBreakdown } from './agent-breakdown.js';

describe('parseAgentsList (--agents)', () => {
  it('reads addresses, each of both roles or of the role before @', () => {
    expect(parseAgentsList('10.0.0.1:7755,producers@a.example:7755,consumers@[::1]:7756')).toEqual([
      { address: '10.0.0.1:7755', roles: ['producers', 'consumers'] },
      { address: 'a.example:7755', roles: ['producers'] },
      { address: '[::1]:7756', roles: ['consumers'] },
    ]);
  });

  it('names the entry that is wrong and what is allowed', () => {
    expect(() => parseAgentsList('a:1,b')).toThrow('"b": must be host:port (got "b")');
    expect(() => parseAgentsList('brokers@a:1')).toThrow(
      'the role before @ must be one of producers, consumers',
    );
    expect(() => parseAgentsList('a:70000')).toThrow('port must be 1 to 65535');
    expect(() => parseAgentsList('a:1,a:1')).toThrow('"a:1" is named twice');
    expect(() => parseAgentsList('')).toThrow('comma-separated list');
  });
});

describe('profile agent fields', () => {
  const base = { name: 'prod', bootstrap: 'k1:9092' };

  it('takes agents as addresses or objects, a token and agentTls, and hides the token', () => {
    const profile = parseProfile({
      ...base,
      agents: ['a:7755', { address: 'b:7755', roles: ['consumers'], name: 'b1' }],
      agentToken: 's3cret',
      agentTls: { ca: '/etc/kbench/agents-ca.pem' },
    });
    expect(profile.agents).toEqual([
      { address: 'a:7755', roles: ['producers', 'consumers'] },
      { address: 'b:7755', roles: ['consumers'], name: 'b1' },
    ]);
    expect(profile.agentTls).toEqual({ ca: '/etc/kbench/agents-ca.pem' });
    expect(maskProfile(profile).agentToken).toBe('********');
  });

  it('names the bad field of an agent entry', () => {
    const issues = (input: object) => {
      try {
        parseProfile({ ...base, ...input });
      } catch (err) {
        if (err instanceof ProfileError) return err.issues;
      }
      throw new Error('expected a ProfileError');
    };
    expect(issues({ agents: ['nohost'] })).toEqual([
      { path: 'agents[0]', message: 'must be host:port (got "nohost")' },
    ]);
    expect(issues({ agents: [{ address: 'a:1', roles: ['all'] }] })[0]?.path).toBe('agents[0]');
    expect(issues({ agents: [{ address: 'a:1', port: 2 }] })).toEqual([
      { path: 'agents[0].port', message: 'unknown field; allowed fields here: address, roles, name' },
    ]);
    expect(issues({ agentToken: 't', agentTokenFile: '/t' })).toEqual([
      { path: 'agentTokenFile', message: 'give agentToken or agentTokenFile, not both' },
    ]);
    expect(issues({ agentTls: { verify: false } })[0]?.message).toMatch(/allowed fields here: ca, insecure/);
  });
});

describe('scenario agents', () => {
  it('defaults to failing a run that loses an agent after 5 s without an answer', () => {
    expect(parseScenario({}).agents).toEqual({ onLoss: 'fail', lossTimeoutMs: 5000 });
  });

  it('refuses an unknown onLoss, naming what is allowed', () => {
    try {
      parseScenario({ agents: { onLoss: 'retry' } });
      throw new Error('expected a ScenarioError');
    } catch (err) {
      expect(err).toBeInstanceOf(ScenarioError);
      expect((err as ScenarioError).issues).toEqual([
        { path: 'agents.onLoss', message: 'must be one of fail, continue (got "retry")' },
      ]);
    }
  });
});

describe('agentLossWarning', () => {
  it('names each lost agent, when and why', () => {
    const agent = { ...agentBreakdown('b', 3200), address: '10.0.0.2:7755' };
    expect(agentLossWarning({ agents: [agent], e2eClockUncertaintyMs: 0, onLoss: 'continue' })).toBe(
      'lost an agent during the run and went on without it (b (10.0.0.2:7755) at 3.2 s: connection closed): the figures after that are from the others only',
    );
    expect(
      agentLossWarning({
        agents: [{ ...agent, lostAtMs: null }],
        e2eClockUncertaintyMs: 0,
        onLoss: 'continue',
      }),
    ).toBeNull();
  });
});
