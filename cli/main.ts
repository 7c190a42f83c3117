// The operator CLI: the same operations as the operator API, over HTTP (docs/auth.md).
//   npm run cli -- accounts create <name>
//   npm run cli -- accounts list [--name <text>] [--limit <n>] [--before <cursor>]
//   npm run cli -- accounts show|suspend|unsuspend <accountId>
//   npm run cli -- accounts debit <accountId> <amount> <reference> --reason <text> [--pool member]
//   npm run cli -- api-keys create <accountId> [--scope <scope>]... [--name <name>] [--expires-at <ISO time>]
//   npm run cli -- api-keys list <accountId>
//   npm run cli -- api-keys revoke <apiKeyId>
//   npm run cli -- api-keys rotate <apiKeyId> [--grace-seconds <n>]
//   npm run cli -- api-keys limits <apiKeyId> | accounts limits <accountId>
//                  [--requests-per-minute <n|none>] [--tokens-per-minute …] [--spend-per-day …] [--spend-per-month …] [--spend-total …]
//   npm run cli -- credits add <accountId> <amount> <reference> [--pool member]
//   npm run cli -- orders create <accountId> <amount>   (a top-up order, paid through checkout)
//   npm run cli -- audit [--account <accountId>] [--action <action>]... [--from <time>] [--to <time>] [--limit <n>] [--before <cursor>]
//   npm run cli -- reconcile [--repair] (exit code 1 when the ledger and an actor disagree, 3 when
//                                         nothing could be checked; --repair first delivers the
//                                         events the ledger lacks)
//   npm run cli -- --help   (or a command followed by --help: that command's usage)
// Reads GATEWAY_URL (default http://127.0.0.1:8080; an http:// or https:// address, else exit 2) and GATEWAY_ADMIN_TOKEN. Exit codes: EXIT below.

import '../lib/node-version'; // first: stops on Node older than 24 with the way out
import { DEFAULT_PORTS } from '../lib/config';
import { API_KEY_SCOPES } from '../services/gateway/auth/scopes';
import { LIMIT_NAMES } from '../lib/limits';
import { reconcileCommand } from './reconcile';

export interface CliIo {
  env: NodeJS.ProcessEnv;
  out: (line: string) => void;
  err: (line: string) => void;
  fetch: typeof fetch;
}

/** A command line after its noun and verb: positional arguments, then `--flag value` pairs. */
interface Parsed {
  args: string[];
  flags: Map<string, string[]>;
}

function parse(words: string[]): Parsed | string {
  const args: string[] = [];
  const flags = new Map<string, string[]>();
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (!word.startsWith('--')) {
      if (flags.size > 0) return `${word}: the arguments come before the flags`;
      args.push(word);
      continue;
    }
    const value = words[++i];
    if (value === undefined) return `${word} needs a value`;
    flags.set(word.slice(2), [...(flags.get(word.slice(2)) ?? []), value]);
  }
  return { args, flags };
}

interface Call {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
}

const amountOf = (text: string | undefined) => (text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined);
const id = (text: string) => encodeURIComponent(text);
/** The query of a list: only the flags given, by their API names. */
function query(flags: Map<string, string[]>, names: Record<string, string>): string {
  const params = new URLSearchParams();
  for (const [flag, name] of Object.entries(names)) {
    const value = flags.get(flag)?.[0];
    if (value !== undefined) params.set(name, value);
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** A whole number of nano-USD (or of seconds), or the problem naming what was given. */
const wholeNumber = (what: string, text: string | undefined): number | string =>
  amountOf(text) ?? `${what} must be a whole number (${what.includes('amount') ? 'nano-USD, 1 USD = 1000000000' : '0 or more'}), not ${JSON.stringify(text ?? '')}`;

/** `--requests-per-minute 60 --spend-total none` as a limits change: a number sets, `none` removes. */
const LIMIT_FLAGS = LIMIT_NAMES.map((name) => name.replaceAll('_', '-'));
function limitsOf(flags: Map<string, string[]>): Record<string, number | null> | string {
  const limits: Record<string, number | null> = {};
  for (const [flag, [value]] of flags) {
    const number = amountOf(value);
    if (value !== 'none' && number === undefined) return `--${flag} must be a whole number or none, not ${JSON.stringify(value)}`;
    limits[flag.replaceAll('-', '_')] = value === 'none' ? null : number!;
  }
  return Object.keys(limits).length > 0 ? limits : `give at least one limit: --${LIMIT_FLAGS.join(', --')} (a number, or none to remove it)`;
}
const limitsCall = (path: string) => ({ args, flags }: Parsed): Call | string => {
  const limits = limitsOf(flags);
  return typeof limits === 'string' ? limits : { method: 'PATCH', path: `${path}/${id(args[0]!)}`, body: { limits } };
};

/**
 * Each command: the flags it takes (a flag not listed is a usage error; `scope` may repeat), its
 * positional arguments, and the call it makes (a string: what is wrong with the arguments).
 */
const COMMANDS: Record<string, { flags: string[]; args: string[]; call: (p: Parsed) => Call | string }> = {
  'accounts create': { flags: [], args: ['<name>'], call: ({ args }) => ({ method: 'POST', path: '/admin/v1/accounts', body: { name: args[0] } }) },
  'accounts list': { flags: ['name', 'limit', 'before'], args: [], call: ({ flags }) => ({ method: 'GET', path: `/admin/v1/accounts${query(flags, { name: 'name', limit: 'limit', before: 'before' })}` }) },
  'accounts show': { flags: [], args: ['<accountId>'], call: ({ args }) => ({ method: 'GET', path: `/admin/v1/accounts/${id(args[0]!)}` }) },
  'accounts suspend': { flags: [], args: ['<accountId>'], call: ({ args }) => ({ method: 'POST', path: `/admin/v1/accounts/${id(args[0]!)}/suspend`, body: {} }) },
  'accounts unsuspend': { flags: [], args: ['<accountId>'], call: ({ args }) => ({ method: 'POST', path: `/admin/v1/accounts/${id(args[0]!)}/unsuspend`, body: {} }) },
  'accounts debit': {
    flags: ['reason', 'pool'], args: ['<accountId>', '<amount>', '<reference>'],
    call: ({ args, flags }) => {
      const amount = wholeNumber('<amount>', args[1]);
      const reason = flags.get('reason')?.[0];
      if (typeof amount === 'string') return amount;
      if (reason === undefined) return '--reason <text> is required: why the account is debited (it goes in the audit log)';
      return { method: 'POST', path: `/admin/v1/accounts/${id(args[0]!)}/debits`, body: { amount, reference: args[2], reason, ...(flags.has('pool') ? { pool: flags.get('pool')![0] } : {}) } };
    },
  },
  // Unscoped keys send the same body as before scopes existed; the gateway validates the names.
  'api-keys create': {
    flags: ['scope', 'name', 'expires-at'], args: ['<accountId>'],
    call: ({ args, flags }) => ({
      method: 'POST', path: `/admin/v1/accounts/${id(args[0]!)}/api-keys`,
      body: {
        ...(flags.has('scope') ? { scopes: flags.get('scope') } : {}),
        ...(flags.has('name') ? { name: flags.get('name')![0] } : {}),
        ...(flags.has('expires-at') ? { expiresAt: flags.get('expires-at')![0] } : {}),
      },
    }),
  },
  'accounts limits': { flags: LIMIT_FLAGS, args: ['<accountId>'], call: limitsCall('/admin/v1/accounts') },
  'api-keys limits': { flags: LIMIT_FLAGS, args: ['<apiKeyId>'], call: limitsCall('/admin/v1/api-keys') },
  'api-keys list': { flags: [], args: ['<accountId>'], call: ({ args }) => ({ method: 'GET', path: `/admin/v1/accounts/${id(args[0]!)}/api-keys` }) },
  'api-keys revoke': { flags: [], args: ['<apiKeyId>'], call: ({ args }) => ({ method: 'DELETE', path: `/admin/v1/api-keys/${id(args[0]!)}` }) },
  'api-keys rotate': {
    flags: ['grace-seconds'], args: ['<apiKeyId>'],
    call: ({ args, flags }) => {
      const grace = flags.get('grace-seconds')?.[0];
      const seconds = grace === undefined ? undefined : wholeNumber('--grace-seconds', grace);
      if (typeof seconds === 'string') return seconds;
      return { method: 'POST', path: `/admin/v1/api-keys/${id(args[0]!)}/rotate`, body: seconds === undefined ? {} : { graceSeconds: seconds } };
    },
  },
  'credits add': {
    flags: ['pool'], args: ['<accountId>', '<amount>', '<reference>'],
    call: ({ args, flags }) => {
      const amount = wholeNumber('<amount>', args[1]);
      if (typeof amount === 'string') return amount;
      return { method: 'POST', path: `/admin/v1/accounts/${id(args[0]!)}/credits`, body: { amount, reference: args[2], ...(flags.has('pool') ? { pool: flags.get('pool')![0] } : {}) } };
    },
  },
  'orders create': {
    flags: [], args: ['<accountId>', '<amount>'],
    call: ({ args }) => {
      const amount = wholeNumber('<amount>', args[1]);
      return typeof amount === 'string' ? amount : { method: 'POST', path: `/admin/v1/accounts/${id(args[0]!)}/orders`, body: { amount } };
    },
  },
  audit: {
    flags: ['account', 'action', 'from', 'to', 'limit', 'before'], args: [],
    call: ({ flags }) => {
      // --action may be repeated: the gateway takes the actions as one list (and names an unknown one).
      const listed = new Map(flags);
      if (flags.has('action')) listed.set('action', [flags.get('action')!.join(',')]);
      return { method: 'GET', path: `/admin/v1/audit${query(listed, { account: 'accountId', action: 'action', from: 'from', to: 'to', limit: 'limit', before: 'before' })}` };
    },
  },
};

const USAGE = `usage:
  accounts create <name>
  accounts list [--name <text>] [--limit <n>] [--before <cursor>]
  accounts show|suspend|unsuspend <accountId>
  accounts debit <accountId> <amount> <reference> --reason <text> [--pool member]
  api-keys create <accountId> [--scope <scope>]... [--name <name>] [--expires-at <ISO time>]   (scopes: ${API_KEY_SCOPES.join(', ')})
  api-keys list <accountId>
  api-keys revoke <apiKeyId>
  api-keys rotate <apiKeyId> [--grace-seconds <n>]
  api-keys limits <apiKeyId> | accounts limits <accountId>   [--${LIMIT_FLAGS.join(' <n|none>] [--')} <n|none>]
  credits add <accountId> <amount> <reference> [--pool member]
  orders create <accountId> <amount>
  audit [--account <accountId>] [--action <action>]... [--from <RFC 3339 time>] [--to <RFC 3339 time>] [--limit <n>] [--before <cursor>]
  reconcile [--repair]`;

/** The call a command line makes, or what is wrong with it. */
function callOf(argv: string[]): Call | string {
  const [noun, verb] = argv;
  const name = noun === 'audit' ? 'audit' : `${noun} ${verb ?? ''}`.trim();
  const command = COMMANDS[name];
  if (!command) return `unknown command: ${name || '(none)'}`;
  const parsed = parse(argv.slice(name === 'audit' ? 1 : 2));
  if (typeof parsed === 'string') return `${name}: ${parsed}`;
  if (parsed.args.length !== command.args.length) {
    return `${name} takes ${command.args.length === 0 ? 'no arguments' : command.args.join(' ')}${parsed.args.length > 0 ? `, not ${parsed.args.map((a) => JSON.stringify(a)).join(' ')}` : ''}`;
  }
  for (const [flag, values] of parsed.flags) {
    if (!command.flags.includes(flag)) return `${name} has no --${flag}${command.flags.length > 0 ? ` (its flags: --${command.flags.join(', --')})` : ''}`;
    if (flag !== 'scope' && flag !== 'action' && values.length > 1) return `${name}: --${flag} is given more than once`;
  }
  const call = command.call(parsed);
  return typeof call === 'string' ? `${name}: ${call}` : call;
}

/**
 * Exit codes: 0 done (reconcile: the ledger and the actors agree); 1 the gateway refused the
 * operation (reconcile: they differ); 2 a command line that is not one (nothing sent); 3 the
 * gateway could not be asked (unreachable, the operator token refused, unavailable): for
 * reconcile, nothing was checked.
 */
export const EXIT = { done: 0, refused: 1, usage: 2, unreachable: 3 } as const;

/** The usage lines of one noun's commands (`accounts`, `api-keys`, …), or every line for another word. */
function usageOf(noun: string | undefined): string {
  const lines = USAGE.split('\n').slice(1).filter((line) => line.trimStart().split(' ')[0] === noun);
  return lines.length === 0 ? USAGE : ['usage:', ...lines].join('\n');
}

const HELP = ['--help', '-h'];

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  if (argv.length === 0 || argv[0] === 'help' || HELP.includes(argv[0]!)) {
    io.out(USAGE);
    return argv.length === 0 ? EXIT.usage : EXIT.done;
  }
  // Help asked after a command (`accounts list --help`): that noun's commands, nothing sent.
  if (argv.some((word) => HELP.includes(word))) {
    io.out(usageOf(argv[0]));
    return EXIT.done;
  }
  // An empty GATEWAY_URL (a blank line in an env file) is unset: the default.
  const base = (io.env.GATEWAY_URL || `http://127.0.0.1:${DEFAULT_PORTS.gateway}`).replace(/\/$/, '');
  const token = io.env.GATEWAY_ADMIN_TOKEN;
  const reconcile = argv[0] === 'reconcile' && (argv.length === 1 || (argv.length === 2 && argv[1] === '--repair'));
  const call = reconcile ? undefined : callOf(argv);
  if (typeof call === 'string') {
    io.err(`error: ${call}\nrun "npm run cli -- --help" for every command`);
    return EXIT.usage;
  }
  const url = URL.parse(base);
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.username !== '' || url.password !== '') {
    io.err(`GATEWAY_URL must be the gateway's http:// or https:// address without credentials, such as http://127.0.0.1:${DEFAULT_PORTS.gateway}; not ${JSON.stringify(url && (url.username || url.password) ? `${url.protocol}//…@${url.host}${url.pathname}` : base)}`);
    return EXIT.usage;
  }
  if (!token) {
    io.err('GATEWAY_ADMIN_TOKEN is not set: the operator token the gateway was started with');
    return EXIT.usage;
  }
  // A header carries printable ASCII only (fetch trims the ends): a token with a line break or a
  // control character inside would be refused by fetch with an error that quotes the header, token and all.
  if (!/^[\x20-\x7e\t]*$/.test(token.trim())) {
    io.err('GATEWAY_ADMIN_TOKEN holds a line break, a control character or a character beyond ASCII, which no HTTP header can carry: check how it was set (it is not printed)');
    return EXIT.usage;
  }
  // Nothing printed ever holds the token, whatever an error quotes.
  const hidden = (text: string) => text.replaceAll(token, '<GATEWAY_ADMIN_TOKEN>');
  try {
    if (reconcile) return await reconcileCommand(base, token, io, { repair: argv[1] === '--repair' });
    const response = await io.fetch(base + call!.path, {
      method: call!.method,
      headers: { authorization: `Bearer ${token}`, ...(call!.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(call!.body !== undefined ? { body: JSON.stringify(call!.body) } : {}),
    });
    const text = await response.text();
    if (!response.ok) {
      io.err(hidden(`${response.status} ${text}`));
      return response.status === 401 || response.status === 403 || response.status >= 500 ? EXIT.unreachable : EXIT.refused;
    }
    io.out(text === '' ? `${response.status}` : text);
    return EXIT.done;
  } catch (error) {
    io.err(hidden(`could not reach the gateway at ${base} (GATEWAY_URL): ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}`));
    return EXIT.unreachable;
  }
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
