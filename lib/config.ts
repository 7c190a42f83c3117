// All configuration in one typed module, read from the environment and validated at start-up.

import { resolve } from 'node:path';
import { z } from 'zod';

export const HARD_BODY_LIMIT = 32 * 1024 * 1024;

/** UNKNOWN_IMAGE_V1: 24 hours from the original reservation. */
export const IMAGE_UNKNOWN_DEADLINE_MS = 24 * 60 * 60 * 1000;
const DAY_MS = IMAGE_UNKNOWN_DEADLINE_MS;

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const envSchema = z.object({
  PORT: int(0, 65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  GATEWAY_DATA_DIR: z.string().min(1).default('./data'),
  GATEWAY_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  GATEWAY_CATALOG_FILE: z.string().min(1).optional(),
  GATEWAY_ACTOR_HOST: z.enum(['embedded', 'dapr']).default('embedded'),
  GATEWAY_MAX_BODY_BYTES: int(1, HARD_BODY_LIMIT).default(HARD_BODY_LIMIT),
  GATEWAY_PROXY_MAX_BODY_BYTES: int(1, HARD_BODY_LIMIT).default(HARD_BODY_LIMIT),
  GATEWAY_PROVIDER_TIMEOUT_MS: int(1, 3_600_000).default(120_000),
  GATEWAY_HOLD_TTL_MS: int(1000, 86_400_000).optional(),
  GATEWAY_IMAGE_UNKNOWN_DEADLINE_MS: int(1000, DAY_MS).optional(),
  GATEWAY_IMAGE_ARTIFACT_WAIT_MS: int(1, DAY_MS).optional(),
  GATEWAY_FSYNC: z.enum(['always', 'os']).default('os'),
  GATEWAY_TEST_MODE: flag.default(false),
  GATEWAY_CHECKOUT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  GATEWAY_CHECKOUT_TOLERANCE_S: int(1, 3600).default(300),
  GATEWAY_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DAPR_HOST: z.string().default('127.0.0.1'),
  DAPR_HTTP_PORT: int(1, 65535).default(3500),
  LEDGER_APP_ID: z.string().default('ledger'),
  APP_PORT: int(1, 65535).optional(),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
});

export type GatewayConfig = ReturnType<typeof loadConfig>;

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const providerTimeoutMs = e.GATEWAY_PROVIDER_TIMEOUT_MS;
  if (e.GATEWAY_IMAGE_UNKNOWN_DEADLINE_MS !== undefined && !e.GATEWAY_TEST_MODE) {
    throw new ConfigError('invalid configuration:\n  GATEWAY_IMAGE_UNKNOWN_DEADLINE_MS: the UNKNOWN_IMAGE_V1 deadline is 24 hours; it may be shortened only with GATEWAY_TEST_MODE=true');
  }
  const imageDeadlineMs = e.GATEWAY_IMAGE_UNKNOWN_DEADLINE_MS ?? IMAGE_UNKNOWN_DEADLINE_MS;
  const holdTtlMs = e.GATEWAY_HOLD_TTL_MS ?? providerTimeoutMs + 60_000;
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: resolve(e.GATEWAY_DATA_DIR),
    adminToken: e.GATEWAY_ADMIN_TOKEN,
    catalogFile: e.GATEWAY_CATALOG_FILE ?? resolve(__dirname, '../catalog/default-catalog.json'),
    actorHost: e.GATEWAY_ACTOR_HOST,
    /** The text service's own limit and the proxy's; the upstream's comes from the provider. */
    maxBodyBytes: Math.min(e.GATEWAY_MAX_BODY_BYTES, e.GATEWAY_PROXY_MAX_BODY_BYTES, HARD_BODY_LIMIT),
    providerTimeoutMs,
    /** A hold outlives the provider timeout; its expiry reminder releases it if its request vanished. */
    holdTtlMs,
    images: {
      /** Frozen into each task at reservation (UNKNOWN_IMAGE_V1). */
      deadlineMs: imageDeadlineMs,
      /** An image hold outlives the deadline, which releases it; its own expiry is the backstop. */
      holdTtlMs: imageDeadlineMs + holdTtlMs,
      /** How long a provider call may run on after its client got 503 (a late artifact can still arrive). */
      artifactWaitMs: Math.max(providerTimeoutMs, e.GATEWAY_IMAGE_ARTIFACT_WAIT_MS ?? imageDeadlineMs + holdTtlMs),
    },
    fsync: e.GATEWAY_FSYNC === 'always',
    testMode: e.GATEWAY_TEST_MODE,
    logLevel: e.GATEWAY_LOG_LEVEL,
    /** Checkout callbacks: HMAC-SHA256 secret (unset: the callback route answers 503) and timestamp tolerance. */
    checkout: { secret: e.GATEWAY_CHECKOUT_SECRET, toleranceS: e.GATEWAY_CHECKOUT_TOLERANCE_S },
    dapr: { host: e.DAPR_HOST, httpPort: e.DAPR_HTTP_PORT, ledgerAppId: e.LEDGER_APP_ID },
    appPort: e.APP_PORT,
    redisUrl: e.REDIS_URL,
  };
}
