// An unsigned JWT (RFC 7519 section 6: `{"alg":"none"}`, an empty signature) that the managed Kafka's
// OAUTHBEARER listener accepts with its unsecured validator. For tests only: anyone can make one.

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

export interface UnsecuredJwtOptions {
  /** The principal (`sub` claim). */
  subject: string;
  /** Seconds until `exp`; negative for a token that has expired already. Default 3600. */
  lifetimeSeconds?: number;
}

/** `header.payload.` with `sub`, `iat` and `exp`, as Kafka's OAuthBearerUnsecuredJws reads it. */
export function unsecuredJwt(options: UnsecuredJwtOptions): string {
  const now = Math.floor(Date.now() / 1000);
  const payload = { sub: options.subject, iat: now, exp: now + (options.lifetimeSeconds ?? 3600) };
  return `${base64url({ alg: 'none' })}.${base64url(payload)}.`;
}
