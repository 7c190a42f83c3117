import { runCli, type CliIo } from './main';

interface Sent {
  url: string;
  body: unknown;
  method?: string;
}

function io(): CliIo & { sent: Sent[]; errors: string[] } {
  const sent: Sent[] = [];
  const errors: string[] = [];
  const fakeFetch = async (url: string | URL | Request, init?: RequestInit) => {
    sent.push({ url: String(url), body: init?.body === undefined ? undefined : JSON.parse(String(init.body)), ...(init?.method !== 'POST' ? { method: init?.method } : {}) });
    return new Response(JSON.stringify({ ok: true }), { status: 201 });
  };
  return { env: { GATEWAY_URL: 'http://gw.test', GATEWAY_ADMIN_TOKEN: 'token-token-token' }, out: () => undefined, err: (line) => errors.push(line), fetch: fakeFetch as typeof fetch, sent, errors };
}

describe('api-keys create', () => {
  it('when no scope is given, then the body is {} exactly as before scopes existed', async () => {
    const cli = io();
    expect(await runCli(['api-keys', 'create', 'acct_1'], cli)).toBe(0);
    expect(cli.sent).toEqual([{ url: 'http://gw.test/admin/v1/accounts/acct_1/api-keys', body: {} }]);
  });

  it('when --scope is repeated, then every scope is sent in order, for the gateway to validate', async () => {
    const cli = io();
    expect(await runCli(['api-keys', 'create', 'acct_1', '--scope', 'compat', '--scope', 'media'], cli)).toBe(0);
    expect(cli.sent[0]?.body).toEqual({ scopes: ['compat', 'media'] });
  });

  it('when a flag is unknown, lacks its value or the account is missing, then exit 2 with an error naming it, and nothing sent', async () => {
    const cases: Array<[string[], string]> = [
      [['acct_1', '--scope'], '--scope needs a value'],
      [['acct_1', '--scopes', 'compat'], 'api-keys create has no --scopes (its flags: --scope, --name, --expires-at)'],
      [['--scope', 'compat'], 'api-keys create takes <accountId>'],
      [[], 'api-keys create takes <accountId>'],
    ];
    for (const [args, problem] of cases) {
      const cli = io();
      expect(await runCli(['api-keys', 'create', ...args], cli)).toBe(2);
      expect(cli.sent).toEqual([]);
      expect([args, cli.errors.join('\n')]).toEqual([args, expect.stringContaining(problem)]);
    }
  });
});

describe('credits add', () => {
  it('when --pool is given, then the credit names that pool; without it the body is as before', async () => {
    const cli = io();
    expect(await runCli(['credits', 'add', 'acct_1', '500', 'ref-1'], cli)).toBe(0);
    expect(await runCli(['credits', 'add', 'acct_1', '500', 'ref-2', '--pool', 'member'], cli)).toBe(0);
    expect(cli.sent.map((s) => s.body)).toEqual([{ amount: 500, reference: 'ref-1' }, { amount: 500, reference: 'ref-2', pool: 'member' }]);
    expect(await runCli(['credits', 'add', 'acct_1', '500', 'ref-3', '--poll', 'member'], cli)).toBe(2);
    expect(cli.sent).toHaveLength(2);
  });
});

describe('the key and account lifecycle commands', () => {
  it('when each command is run, then it makes its operator call', async () => {
    const cli = io();
    const runs: string[][] = [
      ['accounts', 'list', '--name', 'acme team', '--limit', '5'],
      ['accounts', 'show', 'acct_1'],
      ['accounts', 'suspend', 'acct_1'],
      ['accounts', 'unsuspend', 'acct_1'],
      ['accounts', 'debit', 'acct_1', '300', 'fix-1', '--reason', 'double top-up'],
      ['api-keys', 'create', 'acct_1', '--name', 'ci', '--expires-at', '2030-01-01T00:00:00Z', '--scope', 'compat'],
      ['api-keys', 'list', 'acct_1'],
      ['api-keys', 'revoke', 'key_1'],
      ['api-keys', 'rotate', 'key_1', '--grace-seconds', '60'],
      ['audit', '--account', 'acct_1'],
      ['audit', '--action', 'api_key.revoke', '--action', 'api_key.rotate', '--from', '2026-11-28T00:00:00Z', '--to', '2026-11-29T00:00:00Z'],
      ['api-keys', 'limits', 'key_1', '--requests-per-minute', '60', '--spend-total', 'none'],
      ['accounts', 'limits', 'acct_1', '--spend-per-day', '2000000000'],
    ];
    for (const args of runs) expect(await runCli(args, cli)).toBe(0);
    expect(cli.sent).toEqual([
      { url: 'http://gw.test/admin/v1/accounts?name=acme+team&limit=5', body: undefined, method: 'GET' },
      { url: 'http://gw.test/admin/v1/accounts/acct_1', body: undefined, method: 'GET' },
      { url: 'http://gw.test/admin/v1/accounts/acct_1/suspend', body: {} },
      { url: 'http://gw.test/admin/v1/accounts/acct_1/unsuspend', body: {} },
      { url: 'http://gw.test/admin/v1/accounts/acct_1/debits', body: { amount: 300, reference: 'fix-1', reason: 'double top-up' } },
      { url: 'http://gw.test/admin/v1/accounts/acct_1/api-keys', body: { scopes: ['compat'], name: 'ci', expiresAt: '2030-01-01T00:00:00Z' } },
      { url: 'http://gw.test/admin/v1/accounts/acct_1/api-keys', body: undefined, method: 'GET' },
      { url: 'http://gw.test/admin/v1/api-keys/key_1', body: undefined, method: 'DELETE' },
      { url: 'http://gw.test/admin/v1/api-keys/key_1/rotate', body: { graceSeconds: 60 } },
      { url: 'http://gw.test/admin/v1/audit?accountId=acct_1', body: undefined, method: 'GET' },
      { url: 'http://gw.test/admin/v1/audit?action=api_key.revoke%2Capi_key.rotate&from=2026-11-28T00%3A00%3A00Z&to=2026-11-29T00%3A00%3A00Z', body: undefined, method: 'GET' },
      { url: 'http://gw.test/admin/v1/api-keys/key_1', body: { limits: { requests_per_minute: 60, spend_total: null } }, method: 'PATCH' },
      { url: 'http://gw.test/admin/v1/accounts/acct_1', body: { limits: { spend_per_day: 2000000000 } }, method: 'PATCH' },
    ]);
  });

  it('when a command lacks what it needs or has a flag of another, then exit 2 with an error naming what is wrong, and nothing sent', async () => {
    const cases: Array<[string[], string]> = [
      [['accounts', 'debit', 'acct_1', '300', 'fix-1'], 'accounts debit: --reason <text> is required'],
      [['accounts', 'debit', 'acct_1', 'lots', 'fix-1', '--reason', 'x'], 'accounts debit: <amount> must be a whole number (nano-USD, 1 USD = 1000000000), not "lots"'],
      [['credits', 'add', 'acct_1', '-5', 'ref'], 'credits add: <amount> must be a whole number'],
      [['credits', 'add', 'acct_1', '1.5', 'ref'], 'not "1.5"'],
      [['api-keys', 'rotate', 'key_1', '--grace-seconds', 'soon'], 'api-keys rotate: --grace-seconds must be a whole number (0 or more), not "soon"'],
      [['api-keys', 'rotate', 'key_1', '--grace-seconds', '-1'], 'not "-1"'],
      [['api-keys', 'revoke'], 'api-keys revoke takes <apiKeyId>'],
      [['accounts', 'list', '--account', 'acct_1'], 'accounts list has no --account'],
      [['api-keys', 'create', 'acct_1', '--name', 'a', '--name', 'b'], '--name is given more than once'],
      [['api-keys', 'limits', 'key_1'], 'give at least one limit'],
      [['api-keys', 'limits', 'key_1', '--spend-total', 'lots'], '--spend-total must be a whole number or none, not "lots"'],
      [['accounts', 'limits', 'acct_1', '--per-hour', '5'], 'accounts limits has no --per-hour'],
      [['accounts', 'frobnicate', 'acct_1'], 'unknown command: accounts frobnicate'],
    ];
    for (const [args, problem] of cases) {
      const cli = io();
      expect([args, await runCli(args, cli)]).toEqual([args, 2]);
      expect([args, cli.errors.join('\n')]).toEqual([args, expect.stringContaining(problem)]);
      expect(cli.sent).toEqual([]);
    }
  });

  it('when help is asked, then the usage is printed and exit 0, with or without a token; no command at all prints it and exits 2', async () => {
    for (const args of [['--help'], ['-h'], ['help'], []]) {
      const lines: string[] = [];
      const cli = { ...io(), env: {}, out: (line: string) => lines.push(line) };
      expect([args, await runCli(args, cli)]).toEqual([args, args.length === 0 ? 2 : 0]);
      expect(lines.join('\n')).toContain('reconcile [--repair]');
    }
  });

  it('when the token cannot be carried by a header, or an error quotes it, then the token is never printed', async () => {
    for (const token of ['secret-token-0123\nsecond-line', 'secret-token-0123\u0001', 'secret-token-0123\u20ac']) {
      for (const args of [['accounts', 'list'], ['reconcile']]) {
        const cli = { ...io(), env: { GATEWAY_URL: 'http://gw.test', GATEWAY_ADMIN_TOKEN: token } };
        expect([args, await runCli(args, cli)]).toEqual([args, 2]);
        expect(cli.sent).toEqual([]);
        expect(cli.errors.join('\n')).toContain('GATEWAY_ADMIN_TOKEN holds a line break');
        expect(cli.errors.join('\n')).not.toContain('secret-token');
      }
    }
    const token = 'token-token-token';
    const quoting = { ...io(), fetch: (async () => { throw new TypeError(`Headers.append: "Bearer ${token}" is an invalid header value.`); }) as typeof fetch };
    expect(await runCli(['accounts', 'list'], quoting)).toBe(3);
    expect(await runCli(['reconcile'], quoting)).toBe(3);
    expect(quoting.errors.join('\n')).toContain('"Bearer <GATEWAY_ADMIN_TOKEN>" is an invalid header value');
    expect(quoting.errors.join('\n')).not.toContain(token);
  });

  it('when GATEWAY_URL is not an http(s) address, then exit 2 saying what it must be, nothing sent; an empty one is the default', async () => {
    for (const url of ['localhost:8080', '127.0.0.1:8080', 'http//127.0.0.1:8080', 'ftp://gw.test', 'http://user:pw-secret@gw.test']) {
      for (const args of [['accounts', 'list'], ['reconcile']]) {
        const cli = { ...io(), env: { GATEWAY_URL: url, GATEWAY_ADMIN_TOKEN: 'token-token-token' } };
        expect([url, args, await runCli(args, cli)]).toEqual([url, args, 2]);
        expect(cli.sent).toEqual([]);
        expect(cli.errors.join('\n')).toContain('GATEWAY_URL must be the gateway\'s http:// or https:// address');
        expect(cli.errors.join('\n')).not.toContain('pw-secret');
      }
    }
    const blank = { ...io(), env: { GATEWAY_URL: '', GATEWAY_ADMIN_TOKEN: 'token-token-token' } };
    expect(await runCli(['accounts', 'show', 'acct_1'], blank)).toBe(0);
    expect(blank.sent[0]?.url).toMatch(/^http:\/\/127\.0\.0\.1:[0-9]+\/admin\/v1\/accounts\/acct_1$/);
  });

  it('when --help or -h follows a command, then that command\'s usage is printed and exit 0, with or without a token, and nothing is sent', async () => {
    const cases: Array<[string[], string, string]> = [
      [['accounts', 'list', '--help'], 'accounts list [--name <text>]', 'api-keys create'],
      [['accounts', '--help'], 'accounts debit <accountId>', 'credits add'],
      [['api-keys', 'rotate', 'key_1', '-h'], 'api-keys rotate <apiKeyId> [--grace-seconds <n>]', 'accounts create'],
      [['audit', '--account', 'acct_1', '--help'], 'audit [--account <accountId>]', 'accounts create'],
      [['reconcile', '--help'], 'reconcile [--repair]', 'accounts create'],
      [['reconcile', '--repair', '--help'], 'reconcile [--repair]', 'accounts create'],
      [['nonsense', '--help'], 'accounts create <name>', '\0'],
    ];
    for (const [args, shown, notShown] of cases) {
      const lines: string[] = [];
      const cli = { ...io(), env: {}, out: (line: string) => lines.push(line) };
      expect([args, await runCli(args, cli)]).toEqual([args, 0]);
      expect([args, lines.join('\n')]).toEqual([args, expect.stringContaining(shown)]);
      expect(lines.join('\n')).not.toContain(notShown);
      expect(cli.sent).toEqual([]);
    }
  });

  it('when the gateway cannot be reached or refuses the token, then reconcile exits 3 (nothing checked), apart from 1 (a difference); other commands: 3 unreachable, 1 refused', async () => {
    const answering = (status: number, body: unknown) => ({ ...io(), fetch: (async () => new Response(JSON.stringify(body), { status })) as typeof fetch });
    const unreachable = { ...io(), fetch: (async () => { throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:1') }); }) as typeof fetch };
    expect(await runCli(['reconcile'], unreachable)).toBe(3);
    expect(unreachable.errors.join('\n')).toContain('could not reach the gateway at http://gw.test (GATEWAY_URL): connect ECONNREFUSED');
    expect(await runCli(['reconcile'], answering(401, { error: { code: 'unauthorized' } }))).toBe(3);
    expect(await runCli(['reconcile'], answering(503, { error: { code: 'ledger_unavailable' } }))).toBe(3);
    expect(await runCli(['reconcile'], answering(200, { accounts: 2, differences: [{ accountId: 'a', pool: 'pool-3', ledger: 1, actor: 2, ledgerRunningTotal: 1 }] }))).toBe(1);
    expect(await runCli(['reconcile'], answering(200, { accounts: 2, differences: [] }))).toBe(0);
    // A bill lost with no balance moved (a release, a platform-borne record): the counts say it.
    const printed: string[] = [];
    const lostBill = { accountId: 'a', pool: 'pool-3', ledger: 5, actor: 5, ledgerRunningTotal: 5, bills: { ledger: 2, actor: 3 }, missing: [] };
    expect(await runCli(['reconcile'], { ...answering(200, { accounts: 1, differences: [lostBill] }), out: (line: string) => printed.push(line) })).toBe(1);
    expect(printed[0]).toBe('difference a pool-3: ledger 5, actor 5, ledger running total 5 (actor − ledger = 0); bills: ledger 2, actor 3');
    expect(await runCli(['accounts', 'show', 'acct_1'], unreachable)).toBe(3);
    expect(await runCli(['credits', 'add', 'acct_1', '5', 'r'], answering(409, { error: { code: 'credit_reference_reused' } }))).toBe(1);
  });
});
