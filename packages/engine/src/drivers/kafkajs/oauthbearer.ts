// OAUTHBEARER for kafkajs, done as the native engine does it (kbench-client's sasl.rs): the token read
// at each connection (bearer-token.ts), and a refusal read from the broker's answer. kafkajs's own
// oauthbearer ignores what the broker answers: a refused token comes back as a JSON challenge that
// the client must acknowledge (RFC 7628 3.2.2) before the broker fails the login, so kafkajs went on
// to send requests into the unfinished exchange and reported only a lost connection.
import type { OauthBearerSasl } from '@kbench/schema';
import kafkajs, { type AuthenticationProviderArgs, type Mechanism } from 'kafkajs';
import { readBearerToken } from '../../bearer-token.js';

/**
 * Not retried by kafkajs (a non-retriable error). Read off the module object: kafkajs spreads its
 * errors into its exports, which Node's ESM loader cannot name; its typings declare no arguments.
 */
const AuthenticationError = kafkajs.KafkaJSSASLAuthenticationError as unknown as new (
  message: string,
) => Error;

/** The most of the broker's JSON error an error message quotes. */
const STATUS_CHARS = 300;

/** Auth bytes as kafkajs passes them both ways: Kafka's BYTES, an int32 length first. */
function sized(payload: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(payload.length);
  return Buffer.concat([length, payload]);
}
const bytes = (payload: Buffer) => ({ encode: async () => sized(payload) });
/** The broker's answer without its length (-1, null, as none); a slice, nothing allocated. */
const answer = {
  decode: async (b: Buffer) =>
    b.length < 4 || b.readInt32BE(0) <= 0 ? b.subarray(0, 0) : b.subarray(4, 4 + b.readInt32BE(0)),
  parse: (b: Buffer) => b,
};

/** kafkajs's `sasl` for a profile's oauthbearer settings. */
export function oauthBearerMechanism(sasl: OauthBearerSasl): Mechanism {
  return {
    mechanism: 'oauthbearer',
    authenticationProvider: ({ host, port, saslAuthenticate }: AuthenticationProviderArgs) => ({
      async authenticate() {
        const token = await readBearerToken(sasl);
        // RFC 7628 3.1: a GS2 header without an authorization identity, then the token.
        const first = Buffer.from(`n,,\x01auth=Bearer ${token}\x01\x01`);
        const challenge = (await saslAuthenticate({ request: bytes(first), response: answer })) as
          | Buffer
          | undefined;
        if (!challenge || challenge.length === 0) return;
        const status = challenge.toString('utf8').slice(0, STATUS_CHARS);
        let said = '';
        try {
          await saslAuthenticate({ request: bytes(Buffer.from([1])) });
        } catch (err) {
          // Kafka's error message, which is often the same JSON.
          said = (err instanceof Error ? err.message : String(err)).slice(0, STATUS_CHARS);
        }
        const refusal = said.includes(status) ? said : `${said ? `${said} ` : ''}(${status})`;
        throw new AuthenticationError(
          `SASL OAUTHBEARER authentication failed at ${host}:${port}: SASL_AUTHENTICATION_FAILED: ${refusal}`,
        );
      },
    }),
  };
}
