import { runCli, type CliIo } from './main';

interface Sent {
  url: string;
  body: unknown;
}

function io(): CliIo & { sent: Sent[]; errors: string[] } {
  const sent: Sent[] = [];
  const errors: string[] = [];
  const fakeFetch = async (url: string | URL | Request, init?: RequestInit) => {
    sent.push({ url: String(url), body: JSON.parse(String(init?.body)) });
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

  it('when a flag is unknown, lacks its value or the account is missing, then usage and exit 2 with nothing sent', async () => {
    for (const args of [['acct_1', '--scope'], ['acct_1', '--scopes', 'compat'], ['--scope', 'compat'], []]) {
      const cli = io();
      expect(await runCli(['api-keys', 'create', ...args], cli)).toBe(2);
      expect(cli.sent).toEqual([]);
      expect(cli.errors.join('\n')).toContain('--scope <scope>');
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
