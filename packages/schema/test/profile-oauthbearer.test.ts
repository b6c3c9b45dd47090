// OAUTHBEARER in a profile: a token file (an absolute path) or a token command, exactly one, and
// errors that name the field.
import { describe, expect, it } from 'vitest';
import { describeSecurity, maskProfile, ProfileError, parseProfile } from '../src/index.js';

const base = { name: 'cloud', bootstrap: 'b1.example:9093', tls: true };

/** The issues a profile is refused with, as "path: message". */
function refusal(input: unknown): string[] {
  try {
    parseProfile(input);
  } catch (err) {
    if (err instanceof ProfileError) return err.issues.map((i) => `${i.path}: ${i.message}`);
    throw err;
  }
  throw new Error('the profile was accepted');
}

describe('OAUTHBEARER profiles', () => {
  it('takes a token file (an absolute path) and says so without a password', () => {
    const p = parseProfile({ ...base, sasl: { mechanism: 'oauthbearer', tokenFile: '/run/token.jwt' } });
    expect(p.sasl).toEqual({ mechanism: 'oauthbearer', tokenFile: '/run/token.jwt' });
    expect(describeSecurity(p)).toBe('SASL_SSL oauthbearer');
    // Nothing to hide: the path and the command are not the token.
    expect(maskProfile(p).sasl).toEqual(p.sasl);
  });

  it('takes a token command', () => {
    const p = parseProfile({
      ...base,
      sasl: { mechanism: 'oauthbearer', tokenCommand: 'gcloud auth print-access-token' },
    });
    expect(p.sasl).toEqual({ mechanism: 'oauthbearer', tokenCommand: 'gcloud auth print-access-token' });
  });

  it('refuses neither a file nor a command, naming sasl.tokenFile', () => {
    expect(refusal({ ...base, sasl: { mechanism: 'oauthbearer' } })).toEqual([
      'sasl.tokenFile: oauthbearer needs a token: set sasl.tokenFile (an absolute path) or sasl.tokenCommand (a command printing it)',
    ]);
  });

  it('refuses both a file and a command, naming sasl.tokenCommand', () => {
    expect(
      refusal({ ...base, sasl: { mechanism: 'oauthbearer', tokenFile: '/t', tokenCommand: 'cat /t' } }),
    ).toEqual(['sasl.tokenCommand: set sasl.tokenFile or sasl.tokenCommand, not both']);
  });

  it('refuses a relative token file and an empty command', () => {
    expect(refusal({ ...base, sasl: { mechanism: 'oauthbearer', tokenFile: 'token.jwt' } })).toEqual([
      'sasl.tokenFile: must be an absolute path to the file holding the token',
    ]);
    expect(refusal({ ...base, sasl: { mechanism: 'oauthbearer', tokenCommand: '' } })).toEqual([
      'sasl.tokenCommand: must be a non-empty shell command that prints the token',
    ]);
  });

  it('refuses a password with oauthbearer, and a token with a password mechanism', () => {
    expect(refusal({ ...base, sasl: { mechanism: 'oauthbearer', tokenFile: '/t', password: 'x' } })).toEqual([
      'sasl.password: oauthbearer takes no user name or password: set sasl.tokenFile or sasl.tokenCommand',
    ]);
    expect(refusal({ ...base, sasl: { mechanism: 'scram-sha-512', tokenFile: '/t' } })).toEqual([
      'sasl.tokenFile: only oauthbearer takes a token; scram-sha-512 logs in with sasl.username and sasl.password',
      'sasl.username: is required for scram-sha-512 (a non-empty user name)',
      'sasl.password: is required for scram-sha-512 (a non-empty password)',
    ]);
  });

  it('names the four mechanisms when one is unknown', () => {
    expect(refusal({ ...base, sasl: { mechanism: 'gssapi' } })).toEqual([
      'sasl.mechanism: must be one of plain, scram-sha-256, scram-sha-512, oauthbearer (got "gssapi")',
    ]);
  });
});
