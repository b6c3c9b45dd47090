// How clients reach a target: TLS and SASL settings from a profile, with certificate and key files
// read once here, so worker threads get plain values. These objects hold secrets: they go to the
// clients and nowhere else (not the environment, the history or a log line).
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { fileErrorText, type SaslSettings, type TargetProfile } from '@kbench/schema';

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
  /** A password, or (oauthbearer) where each connection reads its token: a file or a command. */
  sasl?: SaslSettings;
}

/** A CA bundle, certificate or key is KBs (the system's whole CA bundle about 200 KB). */
const MAX_PEM_BYTES = 4 * 1024 * 1024;

/**
 * PEM text as is, or the contents of the file it names: a regular file of at most MAX_PEM_BYTES,
 * checked on the opened file before it is read (a device or FIFO is opened without blocking, never read).
 */
export function pem(value: string, field: string): string {
  if (value.includes('-----BEGIN')) return value;
  let fd: number;
  try {
    fd = openSync(value, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    throw new Error(`${field}: cannot read ${value}: ${fileErrorText(err)}`);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new Error(`${field}: ${value} is not a regular file`);
    if (stats.size > MAX_PEM_BYTES)
      throw new Error(
        `${field}: ${value} is ${stats.size} bytes, more than a PEM file holds (at most ${MAX_PEM_BYTES})`,
      );
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
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

/**
 * Patterns of the errors Node, kafkajs and the native driver give for a target they cannot use, and
 * what to do. The native engine's are rustls's words (`invalid peer certificate: UnknownIssuer`,
 * `certificate not valid for name`, `received fatal alert: CertificateRequired`) and Kafka's error
 * names (SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM).
 */
const HINTS: [RegExp, string][] = [
  [
    /unable to verify the first certificate|unable to get local issuer certificate|self[- ]signed certificate|certificate signature failure|invalid peer certificate: (UnknownIssuer|BadSignature)/i,
    "the broker's certificate is not signed by a CA the profile trusts: set tls.ca to the CA that signed it (kbench profile add <name> --ca ca.pem --replace)",
  ],
  [
    /does not match certificate's altnames|ERR_TLS_CERT_ALTNAME_INVALID|certificate not valid for name|NotValidForName/i,
    "the broker's certificate does not carry the host name in bootstrap: connect by a name it carries, or set tls.servername to one",
  ],
  [
    /alert bad certificate|certificate required|peer did not return a certificate|fatal alert: (CertificateRequired|BadCertificate)/i,
    'the listener wants a client certificate: set tls.cert and tls.key (kbench profile add <name> --cert client.pem --key client.key --replace)',
  ],
  [
    /wrong version number|packet length too long|unknown protocol|ERR_SSL_|corrupt message of type InvalidContentType/i,
    'the listener does not speak TLS: use its SSL port, or a profile without tls',
  ],
  [
    /unsupported sasl mechanism|UNSUPPORTED_SASL_MECHANISM|ILLEGAL_SASL_STATE/i,
    'the listener does not enable that sasl.mechanism (or takes no SASL at all)',
  ],
  [
    /OAUTHBEARER authentication failed|invalid_token/i,
    'the broker refused the OAUTHBEARER token: check what sasl.tokenFile or sasl.tokenCommand gives (expired, or not one this cluster accepts)',
  ],
  [
    /SASL.*authentication failed|SASL_AUTHENTICATION_FAILED|Authentication failed/i,
    'check sasl.username, sasl.password and sasl.mechanism: the broker refused them',
  ],
  [
    /ECONNREFUSED|Connection refused/i,
    'nothing listens at that address: check bootstrap and that the brokers are up',
  ],
];

/** A hint for an error a client gave while reaching a target, or null when there is none to give. */
export function connectionHint(error: string): string | null {
  for (const [pattern, hint] of HINTS) if (pattern.test(error)) return hint;
  return null;
}
