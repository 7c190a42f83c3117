// The schema-based fuzzer over every operation of the OpenAPI document (docs/testing.md): schemathesis
// (installed by scripts/ensure-schemathesis.sh) generates valid and invalid requests from the
// document the gateway serves and checks each answer: no server error, every status declared, every
// body matching its declared schema and content type, declared headers present. Each host starts
// the real gateway with every optional part configured (FUZZ_ENV: compatibility routes, OAuth
// members, checkout callbacks), so no route answers 503 for being switched off; the credentials of
// each security scheme are real; path parameters name real models so requests reach the money path.

import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { admin, fundedAccount, image, picture } from '../support/api';
import type { OAuthIssuer } from '../support/oauth';
import { ADMIN_TOKEN, ROOT } from '../support/processes';

/** Answers the fuzzer checks; negative_data_rejection is left out: the documented schemas are looser than the routes' own checks on purpose (a refusal names the exact rule). */
const CHECKS = ['not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_schema_conformance', 'response_headers_conformance'];
/** Fixed, so a failure reproduces; change it to explore. */
const SEED = '20261124';

/** What the gateway is started with on either host, beside its catalog and the OAuth issuer's settings. */
export const FUZZ_ENV = {
  GATEWAY_PROVIDER_TIMEOUT_MS: '2000',
  GATEWAY_COMPAT_ENABLED: 'true',
  GATEWAY_CHECKOUT_SECRET: 'fuzz-checkout-secret-0123456789abcdef',
};

export interface FuzzDeployment {
  url: string;
  /** Where schemathesis may write its config and reports. */
  dir: string;
  issuer: OAuthIssuer;
  close(): Promise<void>;
}

function runFuzzer(url: string, dir: string, bin: string, config: string): Promise<{ code: number; output: string }> {
  const args = ['--no-color', '--config-file', config, 'run', `${url}/api/open/v1/openapi.json`,
    '--checks', CHECKS.join(','), '--phases', 'examples,coverage,fuzzing', '--max-examples', '25', '--seed', SEED, '--workers', '2',
    // No example store: a rerun after an error inside the fuzzer must not replay the draw that hit
    // it from hypothesis's default store on disk (the seed alone makes a run reproducible).
    '--generation-database', 'none',
    '--request-timeout', '10', '--suppress-health-check', 'all'];
  return new Promise((resolve) => {
    execFile(bin, args, { cwd: dir, maxBuffer: 64 * 1024 * 1024, timeout: 900_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

export function fuzzSuite(host: string, start: () => Promise<FuzzDeployment>): void {
  describe(`schema-based fuzzing of every documented operation (${host})`, () => {
    let d: FuzzDeployment;
    beforeAll(async () => {
      d = await start();
    }, 240_000);
    afterAll(async () => {
      await d?.close();
    });

    it('when schemathesis runs every operation with real credentials, then no answer is a server error or differs from the document', async () => {
      const bin = execFileSync('bash', [join(ROOT, 'scripts/ensure-schemathesis.sh')], { encoding: 'utf8' }).trim();
      const { accountId } = await fundedAccount(d.url, 1_000_000_000_000);
      // One key for both API-key schemes, scoped for the compatibility routes (it reaches the plain ones too).
      const apiKey = (await admin(d.url, `/admin/v1/accounts/${accountId}/api-keys`, { scopes: ['compat'] })).body.apiKey as string;
      const task = await image(d.url, apiKey, picture, { model: 'upstream-image' });
      expect(task.status).toBe(200);
      // The member routes pay from the account's member pool: funded, so their calls reach the money path too.
      expect((await admin(d.url, `/admin/v1/accounts/${accountId}/credits`, { amount: 1_000_000_000_000, reference: 'fuzz-member', pool: 'member' })).status).toBeLessThan(300);
      const member = await d.issuer.mint({ sub: 'member-1', account: accountId, scope: 'chat', expiresInS: 3600 });
      // The operator's operations act on an account of their own: limits the fuzzer sets there
      // (a tokens_per_minute of 1, say) would otherwise refuse every later call of the paying one.
      const { accountId: operated } = await fundedAccount(d.url, 1_000_000_000);
      const config = join(d.dir, 'schemathesis.toml');
      writeFileSync(config, [
        '[auth.openapi.apiKey]', `bearer = "${apiKey}"`,
        '[auth.openapi.oauth]', `bearer = "${member}"`,
        '[auth.openapi.xApiKey]', `api_key = "${apiKey}"`,
        '[auth.openapi.adminToken]', `bearer = "${ADMIN_TOKEN}"`,
        // Path parameters that name real things, so generated requests reach the money path.
        '[[operations]]', 'include-path-regex = "/chat$"', 'parameters = { "path.id" = "upstream-chat" }',
        '[[operations]]', 'include-path-regex = "/chat/anthropic$"', 'parameters = { "path.id" = "upstream-anthropic-chat" }',
        '[[operations]]', 'include-path-regex = "/images/generations$"', 'parameters = { "path.id" = "upstream-image" }',
        '[[operations]]', 'include-path-regex = "^/admin/v1/accounts/"', `parameters = { "path.accountId" = "${operated}" }`,
        '[[operations]]', 'include-path-regex = "/images/tasks/"', `parameters = { "path.id" = "upstream-image", "path.taskId" = "${task.body.taskId}" }`,
        '',
      ].join('\n'));
      let { code, output } = await runFuzzer(d.url, d.dir, bin, config);
      // A run whose only trouble is an error inside the fuzzer itself (its ERRORS section: hypothesis
      // failing to replay or describe one of its own strategies, never an answer of the gateway) runs
      // again, twice at most; a check that failed (the FAILURES section) never does.
      for (let retry = 0; retry < 2 && code !== 0 && !/=+ FAILURES =+/.test(output) && /=+ ERRORS =+/.test(output); retry++) {
        ({ code, output } = await runFuzzer(d.url, d.dir, bin, config));
      }
      if (code !== 0) console.log(output);
      expect(output).toMatch(/Operations:\s+(\d+) selected \/ \1 total/);
      expect(code).toBe(0);
    }, 900_000);
  });
}
