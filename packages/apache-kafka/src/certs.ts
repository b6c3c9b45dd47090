// Throwaway TLS material for tests and local clusters, made with the openssl CLI: a private CA, a
// server certificate for 127.0.0.1 and localhost, and a client certificate for mutual TLS. Keys are
// EC P-256 in unencrypted PKCS#8 PEM, which both Node and Kafka's PEM key stores read.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MissingProgramError } from './errors.js';

export interface TestCertificates {
  /** The folder holding every file below. */
  dir: string;
  /** The CA's certificate, PEM: what a client trusts (`tls.ca`) and what the broker trusts for client certificates. */
  caFile: string;
  /** The CA's private key (kept so that more certificates could be signed). */
  caKeyFile: string;
  /** The server's certificate (subjectAltName IP:127.0.0.1, DNS:localhost), signed by the CA. */
  serverCertFile: string;
  serverKeyFile: string;
  /** A client certificate (extendedKeyUsage clientAuth), signed by the CA, for mutual TLS. */
  clientCertFile: string;
  clientKeyFile: string;
  /** The same material as PEM text. */
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

export interface TestCertificateOptions {
  /** Names the CA (its subject CN is `<name> CA`) so that two sets are easy to tell apart. Default `kbench test`. */
  name?: string;
  /** Validity in days. Default 2. */
  days?: number;
  /** The openssl program. Default `openssl` on PATH. */
  openssl?: string;
}

function run(program: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(program, args, { cwd, timeout: 60_000 }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(
          new MissingProgramError(
            program,
            'kbench makes test TLS certificates with it',
            'apt-get install openssl',
          ),
        );
        return;
      }
      reject(new Error(`${program} ${args[0]} failed: ${String(stderr).trim() || err.message}`));
    });
  });
}

/**
 * Writes a fresh CA, a server certificate and a client certificate (each with its key) into `dir`
 * (created if needed; key files mode 0600) and returns their paths and PEM text.
 */
export async function makeTestCertificates(
  dir: string,
  options: TestCertificateOptions = {},
): Promise<TestCertificates> {
  const openssl = options.openssl ?? 'openssl';
  const name = options.name ?? 'kbench test';
  const days = String(options.days ?? 2);
  mkdirSync(dir, { recursive: true });
  const file = (f: string) => join(dir, f);
  const newKey = (out: string) =>
    run(openssl, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', out], dir);

  // Extensions go in small config files: -addext and -copy_extensions differ between openssl versions.
  writeFileSync(
    file('ca.cnf'),
    [
      '[req]',
      'distinguished_name = dn',
      'x509_extensions = ca',
      'prompt = no',
      '[dn]',
      `CN = ${name} CA`,
      '[ca]',
      'basicConstraints = critical, CA:TRUE',
      'keyUsage = critical, keyCertSign, cRLSign',
      'subjectKeyIdentifier = hash',
      '',
    ].join('\n'),
  );
  const leafExtensions = (usage: string, san?: string) =>
    [
      'basicConstraints = critical, CA:FALSE',
      'keyUsage = critical, digitalSignature, keyAgreement',
      `extendedKeyUsage = ${usage}`,
      'subjectKeyIdentifier = hash',
      'authorityKeyIdentifier = keyid',
      ...(san ? [`subjectAltName = ${san}`] : []),
      '',
    ].join('\n');
  writeFileSync(file('server.ext'), leafExtensions('serverAuth', 'IP:127.0.0.1, DNS:localhost'));
  writeFileSync(file('client.ext'), leafExtensions('clientAuth'));

  await Promise.all([newKey('ca.key'), newKey('server.key'), newKey('client.key')]);
  await run(
    openssl,
    [
      'req',
      '-x509',
      '-new',
      '-config',
      'ca.cnf',
      '-key',
      'ca.key',
      '-days',
      days,
      '-sha256',
      '-out',
      'ca.pem',
    ],
    dir,
  );
  const issue = async (leaf: 'server' | 'client', cn: string, serial: string) => {
    await run(
      openssl,
      ['req', '-new', '-key', `${leaf}.key`, '-subj', `/CN=${cn}`, '-out', `${leaf}.csr`],
      dir,
    );
    await run(
      openssl,
      [
        'x509',
        '-req',
        '-in',
        `${leaf}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-set_serial',
        serial,
        '-days',
        days,
        '-sha256',
        '-extfile',
        `${leaf}.ext`,
        '-out',
        `${leaf}.pem`,
      ],
      dir,
    );
  };
  // Serials need only be unique per CA; a random one keeps two sets from looking alike.
  const serial = () => `0x${randomBytes(8).toString('hex')}`;
  await Promise.all([issue('server', 'localhost', serial()), issue('client', 'kbench-client', serial())]);

  for (const key of ['ca.key', 'server.key', 'client.key']) chmodSync(file(key), 0o600);
  const read = (f: string) => readFileSync(file(f), 'utf8');
  return {
    dir,
    caFile: file('ca.pem'),
    caKeyFile: file('ca.key'),
    serverCertFile: file('server.pem'),
    serverKeyFile: file('server.key'),
    clientCertFile: file('client.pem'),
    clientKeyFile: file('client.key'),
    ca: read('ca.pem'),
    serverCert: read('server.pem'),
    serverKey: read('server.key'),
    clientCert: read('client.pem'),
    clientKey: read('client.key'),
  };
}
