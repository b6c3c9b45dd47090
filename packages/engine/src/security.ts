// How clients reach a target: TLS and SASL settings from a profile, with certificate and key files
// read once here, so worker threads get plain values. These objects hold secrets: they go to the
// clients and nowhere else (not the environment, the history or a log line).
import { readFileSync } from 'node:fs';
import type { SaslMechanism, TargetProfile } from '@kbench/schema';

export interface TlsOptions {
  ca?: string;
  cert?: string;
  key?: string;
  passphrase?: string;
  rejectUnauthorized: boolean;
  servername?: string;
}

export interface ConnectionSecurity {
  tls?: TlsOptions;
  sasl?: { mechanism: SaslMechanism; username: string; password: string };
}

/** PEM text as is, or the contents of the file it names. */
function pem(value: string, field: string): string {
  if (value.includes('-----BEGIN')) return value;
  try {
    return readFileSync(value, 'utf8');
  } catch (err) {
    throw new Error(`${field}: cannot read ${value} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

/** The settings clients need for a profile; undefined when it connects in plain text. */
export function connectionSecurity(profile: TargetProfile): ConnectionSecurity | undefined {
  const out: ConnectionSecurity = {};
  if (profile.tls) {
    const { ca, cert, key, passphrase, rejectUnauthorized, servername } = profile.tls;
    out.tls = {
      rejectUnauthorized,
      ...(ca !== undefined ? { ca: pem(ca, 'tls.ca') } : {}),
      ...(cert !== undefined ? { cert: pem(cert, 'tls.cert') } : {}),
      ...(key !== undefined ? { key: pem(key, 'tls.key') } : {}),
      ...(passphrase !== undefined ? { passphrase } : {}),
      ...(servername !== undefined ? { servername } : {}),
    };
  }
  if (profile.sasl) out.sasl = { ...profile.sasl };
  return out.tls || out.sasl ? out : undefined;
}
