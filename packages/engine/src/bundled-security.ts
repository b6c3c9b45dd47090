// The bundled target's secured listener (a scenario's cluster.security): a CA, a server certificate and
// a SASL user made for the run, never stored. The broker reads its certificate and key from files this
// run writes (readable by the user only) and removes with the broker's data; the clients get the CA
// and the user's password in memory. The stored run says only how the listener was secured.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type BrokerSecurity, throwawayTls } from '@kbench/broker-native';
import type { Scenario } from '@kbench/schema';
import type { ConnectionSecurity } from './security.js';

/** The user the run's clients log in as. */
export const BUNDLED_USER = 'kbench';

export interface BundledListener {
  /** What the broker (or each node) listens with: file paths and `NAME:PASSWORD`. */
  broker: BrokerSecurity;
  /** What the run's clients connect with. */
  clients: ConnectionSecurity;
  /** Removes the certificate and key files. */
  remove(): Promise<void>;
}

/** How a scenario's cluster.security secures the bundled listener, in Kafka's words (`SASL_SSL scram-sha-512`). */
export function bundledSecurityName(scenario: Scenario): string | undefined {
  const security = scenario.cluster.security;
  if (scenario.target !== 'bundled' || !security || (!security.tls && security.sasl === 'none'))
    return undefined;
  if (security.sasl === 'none') return 'SSL';
  return `${security.tls ? 'SASL_SSL' : 'SASL_PLAINTEXT'} ${security.sasl}`;
}

/** The listener a scenario asks for, or undefined for plain text. Loopback only: the bundled broker binds 127.0.0.1. */
export async function bundledListener(
  security: Scenario['cluster']['security'],
  workDir?: string,
): Promise<BundledListener | undefined> {
  if (!security || (!security.tls && security.sasl === 'none')) return undefined;
  const broker: BrokerSecurity = {};
  const clients: ConnectionSecurity = {};
  let dir: string | undefined;
  try {
    if (security.tls) {
      dir = await mkdtemp(path.join(workDir ?? os.tmpdir(), 'kbench-tls-'));
      const made = throwawayTls(['127.0.0.1', 'localhost']);
      broker.tlsCert = path.join(dir, 'server.pem');
      broker.tlsKey = path.join(dir, 'server.key');
      await writeFile(broker.tlsCert, made.cert, { mode: 0o600 });
      await writeFile(broker.tlsKey, made.key, { mode: 0o600 });
      clients.tls = { ca: made.ca, rejectUnauthorized: true };
    }
    if (security.sasl !== 'none') {
      const password = randomBytes(18).toString('base64url');
      broker.saslMechanisms = [security.sasl];
      broker.users = [`${BUNDLED_USER}:${password}`];
      clients.sasl = { mechanism: security.sasl, username: BUNDLED_USER, password };
    }
  } catch (err) {
    if (dir) await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    broker,
    clients,
    remove: async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}
