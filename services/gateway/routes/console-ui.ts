// The web console (docs/console.md, "Web console"): the page at /console and its content-hashed
// assets, built by `npm run build` into dist/services/gateway/console/ (scripts/build-console.mjs). Nothing here
// needs a credential: the page then calls the gateway's routes with the key in an Authorization
// header. A strict Content-Security-Policy allows scripts, styles and requests from this origin
// only (no inline script or style, no third-party origin).

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Router, type Request, type Response } from 'express';
import { GatewayError } from '../../../lib/errors';

export const CONSOLE_CSP = [
  "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self'", "connect-src 'self'", "font-src 'self'",
  "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml' };
/** What the build makes: `<name>-<hash>.js|css|svg`; anything else (a path, a dot file) is not an asset. */
const ASSET = /^[A-Za-z0-9_-]+-[A-Z0-9]{8}\.(js|css|svg)$/;

/** The built console; `dir` defaults to the one the build puts beside the built gateway. */
export function consoleUiRoutes(dir = join(__dirname, '../console')): Router {
  const router = Router();
  router.get('/console', async (_req, res) => {
    const html = await readFile(join(dir, 'index.html')).catch(() => {
      throw new GatewayError('not_found', 'the console is not built: run npm run build');
    });
    res.set({ ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' }).send(html);
  });
  router.get('/console/assets/:file', async (req: Request, res: Response) => {
    const file = req.params.file as string;
    const match = ASSET.exec(file);
    if (!match) throw new GatewayError('not_found', `no console asset ${file}`);
    const accepts = String(req.headers['accept-encoding'] ?? '');
    const encodings: [string, string][] = [['br', '.br'], ['gzip', '.gz'], ['', '']];
    for (const [encoding, suffix] of encodings) {
      if (encoding && !new RegExp(`\\b${encoding}\\b`).test(accepts)) continue;
      const body = await readFile(join(dir, 'assets', file + suffix)).catch(() => undefined);
      if (!body) continue;
      res.set({
        ...SECURITY_HEADERS,
        'content-type': TYPES[match[1]!]!,
        'cache-control': 'public, max-age=31536000, immutable',
        vary: 'accept-encoding',
        ...(encoding ? { 'content-encoding': encoding } : {}),
      }).send(body);
      return;
    }
    throw new GatewayError('not_found', `no console asset ${file}`);
  });
  return router;
}
