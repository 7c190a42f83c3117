// The operator CLI: the same operations as the operator API, over HTTP.
//   npm run cli -- accounts create <name>
//   npm run cli -- api-keys create <accountId> [--scope <scope>]...   (scopes: docs/auth.md)
//   npm run cli -- credits add <accountId> <amount> <reference> [--pool member]
//   npm run cli -- orders create <accountId> <amount>   (a top-up order, paid through checkout)
//   npm run cli -- reconcile [--repair] (exit code 1 when the ledger and an actor disagree;
//                                         --repair first delivers the events the ledger lacks)
// Reads GATEWAY_URL (default http://127.0.0.1:8080) and GATEWAY_ADMIN_TOKEN.

import '../lib/node-version'; // first: stops on Node older than 24 with the way out
import { DEFAULT_PORTS } from '../lib/config';
import { API_KEY_SCOPES } from '../services/gateway/auth/scopes';
import { reconcileCommand } from './reconcile';

export interface CliIo {
  env: NodeJS.ProcessEnv;
  out: (line: string) => void;
  err: (line: string) => void;
  fetch: typeof fetch;
}

/** `<accountId> [--scope <s>]...` as the request body's scopes; undefined when malformed. */
function apiKeyArgs(args: string[]): { accountId: string; scopes: string[] } | undefined {
  const [accountId, ...flags] = args;
  if (accountId === undefined || accountId.startsWith('--') || flags.length % 2 !== 0) return undefined;
  const scopes: string[] = [];
  for (let i = 0; i < flags.length; i += 2) {
    if (flags[i] !== '--scope') return undefined;
    scopes.push(flags[i + 1]!);
  }
  return { accountId, scopes };
}

const USAGE = `usage:
  accounts create <name>
  api-keys create <accountId> [--scope <scope>]...   (scopes: ${API_KEY_SCOPES.join(', ')})
  credits add <accountId> <amount> <reference> [--pool member]
  orders create <accountId> <amount>
  reconcile [--repair]`;

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const base = (io.env.GATEWAY_URL ?? `http://127.0.0.1:${DEFAULT_PORTS.gateway}`).replace(/\/$/, '');
  const token = io.env.GATEWAY_ADMIN_TOKEN;
  if (!token) {
    io.err('GATEWAY_ADMIN_TOKEN is not set');
    return 2;
  }
  if (argv.length === 1 && argv[0] === 'reconcile') return reconcileCommand(base, token, io);
  if (argv.length === 2 && argv[0] === 'reconcile' && argv[1] === '--repair') return reconcileCommand(base, token, io, { repair: true });
  const [noun, verb, ...rest] = argv;
  const keyArgs = noun === 'api-keys' && verb === 'create' ? apiKeyArgs(rest) : undefined;
  let path: string;
  let body: unknown;
  if (noun === 'accounts' && verb === 'create' && rest.length === 1) {
    path = '/admin/v1/accounts';
    body = { name: rest[0] };
  } else if (keyArgs) {
    path = `/admin/v1/accounts/${encodeURIComponent(keyArgs.accountId)}/api-keys`;
    // Unscoped keys send the same body as before scopes existed; the gateway validates the names.
    body = keyArgs.scopes.length > 0 ? { scopes: keyArgs.scopes } : {};
  } else if (noun === 'credits' && verb === 'add' && (rest.length === 3 || (rest.length === 5 && rest[3] === '--pool')) && /^\d+$/.test(rest[1] ?? '')) {
    path = `/admin/v1/accounts/${encodeURIComponent(rest[0])}/credits`;
    body = { amount: Number(rest[1]), reference: rest[2], ...(rest.length === 5 ? { pool: rest[4] } : {}) };
  } else if (noun === 'orders' && verb === 'create' && rest.length === 2 && /^\d+$/.test(rest[1] ?? '')) {
    path = `/admin/v1/accounts/${encodeURIComponent(rest[0])}/orders`;
    body = { amount: Number(rest[1]) };
  } else {
    io.err(USAGE);
    return 2;
  }
  const response = await io.fetch(base + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) {
    io.err(`${response.status} ${text}`);
    return 1;
  }
  io.out(text);
  return 0;
}

if (require.main === module) {
  runCli(process.argv.slice(2), { env: process.env, out: (l) => console.log(l), err: (l) => console.error(l), fetch }).then(
    (code) => process.exit(code),
    (error) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
