// The hints a failed run's error gets for the usual mistakes in reaching a target. The real handshakes
// behind these messages are in tls.test.ts and external-targets.test.ts; here, each rule on its own.
import { describe, expect, it } from 'vitest';
import { connectionHint } from '../src/security.js';

describe('connectionHint', () => {
  it.each([
    ['Connection error: unable to verify the first certificate', /tls\.ca/],
    ['Connection error: self-signed certificate in certificate chain', /tls\.ca/],
    [
      "Connection error: Hostname/IP does not match certificate's altnames: Host: kafka.example.com",
      /tls\.servername/,
    ],
    [
      'Connection error: C0F7:error:0A000412:SSL routines:ssl3_read_bytes:sslv3 alert bad certificate',
      /tls\.cert/,
    ],
    [
      'Connection error: C0F7:error:0A00010B:SSL routines:ssl3_get_record:wrong version number',
      /does not speak TLS/,
    ],
    [
      'SASL SCRAM SHA256 authentication failed: Authentication failed during authentication',
      /sasl\.password/,
    ],
    [
      'The broker does not support the requested SASL mechanism (UNSUPPORTED_SASL_MECHANISM)',
      /sasl\.mechanism/,
    ],
    ['Connection error: connect ECONNREFUSED 127.0.0.1:1', /nothing listens/],
  ])('%s', (error, hint) => {
    expect(connectionHint(error)).toMatch(hint);
  });

  it('has nothing to say about other failures', () => {
    expect(connectionHint('topic t exists already on the target')).toBeNull();
    expect(connectionHint('no record was acknowledged')).toBeNull();
  });
});
