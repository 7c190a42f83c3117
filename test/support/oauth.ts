// A real OAuth issuer for tests: its own signing keys, its public JWKS served over HTTP on
// loopback (so the gateway fetches keys as it would in production), and a minting function that
// can also make every kind of bad token the gateway must refuse.

import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export type IssuerAlg = 'ES256' | 'RS256';

export interface MintClaims {
  /** Default "member-1"; null leaves the claim out. */
  sub?: string | null;
  /** The gateway account (claim payg_account); left out when undefined. */
  account?: string;
  /** A string goes out as `scope`, a list as `scp`. */
  scope?: string | string[];
  /** Default 300; null leaves `exp` out; negative makes an expired token. */
  expiresInS?: number | null;
  /** Sets `nbf` this many seconds from now. */
  notBeforeS?: number;
  aud?: string;
  iss?: string;
  jti?: string;
}

export interface MintOptions {
  /** Overrides the `kid` header (an unknown kid, say); null leaves it out. */
  kid?: string | null;
  /** HS256 signs with a shared secret, none leaves the token unsigned: both must be refused. */
  alg?: IssuerAlg | 'HS256' | 'none';
  /** Signs with a key the JWKS does not hold, under the current kid: a bad signature. */
  signWith?: 'other-key';
}

export interface OAuthIssuer {
  issuer: string;
  audience: string;
  jwksUrl: string;
  /** How many times the JWKS was served. */
  readonly jwksFetches: number;
  mint(claims?: MintClaims, options?: MintOptions): Promise<string>;
  /** Publishes a new key (the old one stays published) and signs with it from now on; its kid. */
  rotate(): Promise<string>;
  /** The JWKS answers with this status (and no keys) until set back to 200. */
  failJwks(status: number): void;
  env(): Record<string, string>;
  close(): Promise<void>;
}

interface SigningKey {
  kid: string;
  alg: IssuerAlg;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function signingKey(alg: IssuerAlg): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  const kid = `kid-${randomBytes(6).toString('hex')}`;
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

export async function startOAuthIssuer(options: { alg?: IssuerAlg } = {}): Promise<OAuthIssuer> {
  const alg = options.alg ?? 'ES256';
  const keys: SigningKey[] = [await signingKey(alg)];
  let fetches = 0;
  let jwksStatus = 200;
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/.well-known/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    fetches += 1;
    if (jwksStatus !== 200) {
      res.writeHead(jwksStatus, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: keys.map((k) => k.publicJwk) }));
  });
  const port = await listen(server);
  const issuer = `http://127.0.0.1:${port}`;
  const audience = 'payg-gateway-test';
  const jwksUrl = `${issuer}/.well-known/jwks.json`;
  const current = () => keys[keys.length - 1]!;

  async function mint(claims: MintClaims = {}, mintOptions: MintOptions = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const payload: JWTPayload = { iss: claims.iss ?? issuer, aud: claims.aud ?? audience, iat: now };
    const sub = claims.sub === undefined ? 'member-1' : claims.sub;
    if (sub !== null) payload.sub = sub;
    if (claims.account !== undefined) payload.payg_account = claims.account;
    if (typeof claims.scope === 'string') payload.scope = claims.scope;
    if (Array.isArray(claims.scope)) payload.scp = claims.scope;
    const expiresInS = claims.expiresInS === undefined ? 300 : claims.expiresInS;
    if (expiresInS !== null) payload.exp = now + expiresInS;
    if (claims.notBeforeS !== undefined) payload.nbf = now + claims.notBeforeS;
    if (claims.jti !== undefined) payload.jti = claims.jti;

    const key = current();
    const kid = mintOptions.kid === null ? undefined : mintOptions.kid ?? key.kid;
    if (mintOptions.alg === 'none') return new UnsecuredJWT(payload).encode();
    if (mintOptions.alg === 'HS256') return new SignJWT(payload).setProtectedHeader({ alg: 'HS256', kid }).sign(randomBytes(32));
    const signAlg = mintOptions.alg ?? key.alg;
    const privateKey = mintOptions.signWith === 'other-key' || signAlg !== key.alg ? (await generateKeyPair(signAlg)).privateKey : key.privateKey;
    return new SignJWT(payload).setProtectedHeader({ alg: signAlg, kid, typ: 'JWT' }).sign(privateKey);
  }

  return {
    issuer,
    audience,
    jwksUrl,
    get jwksFetches() {
      return fetches;
    },
    mint,
    async rotate() {
      keys.push(await signingKey(alg));
      return current().kid;
    },
    failJwks(status: number) {
      jwksStatus = status;
    },
    env: () => ({ GATEWAY_OAUTH_ISSUER: issuer, GATEWAY_OAUTH_AUDIENCE: audience, GATEWAY_OAUTH_JWKS_URL: jwksUrl }),
    close: () => new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((error) => (error ? reject(error) : resolve()));
    }),
  };
}
