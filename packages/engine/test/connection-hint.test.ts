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
    // The native engine's words (rustls, and Kafka's error names).
    ['TLS handshake with 127.0.0.1:9093 failed: invalid peer certificate: UnknownIssuer', /tls\.ca/],
    ['TLS handshake with 127.0.0.1:9093 failed: invalid peer certificate: BadSignature', /tls\.ca/],
    [
      'TLS handshake with 127.0.0.1:9093 failed: invalid peer certificate: certificate not valid for name "kafka.example.com"; certificate is only valid for IpAddress(127.0.0.1)',
      /tls\.servername/,
    ],
    ['i/o with 127.0.0.1:9094: received fatal alert: CertificateRequired', /tls\.cert/],
    ['TLS handshake with 127.0.0.1:9094 failed: received fatal alert: BadCertificate', /tls\.cert/],
    [
      'TLS handshake with 127.0.0.1:9092 failed: received corrupt message of type InvalidContentType',
      /does not speak TLS/,
    ],
    [
      'SASL with 127.0.0.1:9095: SCRAM-SHA-512 authentication failed: SASL_AUTHENTICATION_FAILED (code 58): Authentication failed',
      /sasl\.password/,
    ],
    [
      'SASL with 127.0.0.1:9095: the broker does not enable SCRAM-SHA-256 (UNSUPPORTED_SASL_MECHANISM; it offers ["PLAIN"])',
      /sasl\.mechanism/,
    ],
  ])('%s', (error, hint) => {
    expect(connectionHint(error)).toMatch(hint);
  });

  it('has nothing to say about other failures', () => {
    expect(connectionHint('topic t exists already on the target')).toBeNull();
    expect(connectionHint('no record was acknowledged')).toBeNull();
  });
});
