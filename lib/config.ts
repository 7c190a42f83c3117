// All configuration in one typed module, read from the environment and validated at start-up.

import { resolve } from 'node:path';
import { z } from 'zod';
import { parseFaultPoints } from './fault-points';

export const HARD_BODY_LIMIT = 32 * 1024 * 1024;

/** Where each app listens unless told otherwise: the gateway on PORT, the actors and ledger apps on APP_PORT. */
export const DEFAULT_PORTS = { gateway: 8080, actors: 3101, ledger: 3102 } as const;

/** UNKNOWN_IMAGE_V1: 24 hours from the original reservation. */
export const IMAGE_UNKNOWN_DEADLINE_MS = 24 * 60 * 60 * 1000;
const DAY_MS = IMAGE_UNKNOWN_DEADLINE_MS;

/**
 * The longest an API key lookup may be answered from memory: a key revoked (its record removed
 * or changed in the store) stops working within this long on every gateway instance, and a key
 * created on another instance starts working within it (docs/auth.md).
 */
export const API_KEY_CACHE_MAX_MS = 1000;

/** A whole number in range, in decimal digits. An empty or blank value is refused, not read as 0 (`PORT=` in an env file). */
const int = (min: number, max: number) => z.string().trim().regex(/^-?[0-9]+$/, 'must be a whole number (it is empty or not a number)').transform(Number).pipe(z.number().int().min(min).max(max));
const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const envSchema = z.object({
  PORT: int(0, 65535).default(DEFAULT_PORTS.gateway),
  HOST: z.string().min(1).default('127.0.0.1'),
  GATEWAY_DATA_DIR: z.string().min(1).default('./data'),
  GATEWAY_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  GATEWAY_CATALOG_FILE: z.string().min(1).optional(),
  GATEWAY_ACTOR_HOST: z.enum(['embedded', 'dapr']).default('embedded'),
  GATEWAY_MAX_BODY_BYTES: int(1, HARD_BODY_LIMIT).default(HARD_BODY_LIMIT),
  GATEWAY_ACCOUNT_BODY_BYTES: int(1, Number.MAX_SAFE_INTEGER).default(2 * HARD_BODY_LIMIT),
  GATEWAY_BODY_BYTES_IN_FLIGHT: int(1, Number.MAX_SAFE_INTEGER).default(4 * HARD_BODY_LIMIT),
  GATEWAY_REQUEST_TIMEOUT_MS: int(1000, 3_600_000).default(60_000),
  GATEWAY_ACCOUNT_EVENT_STREAMS: int(1, 1_000_000).default(100),
  GATEWAY_ACCOUNT_CALLS: int(1, 1_000_000).default(1000),
  GATEWAY_ORDERS_PER_DAY: int(1, 1_000_000).default(100),
  GATEWAY_PROXY_MAX_BODY_BYTES: int(1, HARD_BODY_LIMIT).default(HARD_BODY_LIMIT),
  GATEWAY_PROVIDER_TIMEOUT_MS: int(1, 3_600_000).default(120_000),
  GATEWAY_UPSTREAM_ATTEMPT_TIMEOUT_MS: int(1, 3_600_000).default(30_000),
  GATEWAY_CIRCUIT_FAILURES: int(1, 1000).default(5),
  GATEWAY_CIRCUIT_COOLDOWN_MS: int(1, 3_600_000).default(30_000),
  GATEWAY_HOLD_TTL_MS: int(1000, 86_400_000).optional(),
  GATEWAY_HOLD_PROGRESS_TOKENS: int(1, 1_000_000).default(256),
  GATEWAY_HOLD_PROGRESS_MS: int(100, 600_000).default(2000),
  GATEWAY_FUNDS_LEASE: z.enum(['on', 'off']).optional(),
  GATEWAY_FUNDS_LEASE_IDLE_MS: int(100, 3_600_000).default(5000),
  GATEWAY_FUNDS_LEASE_MAX: int(1, Number.MAX_SAFE_INTEGER).default(5_000_000_000),
  GATEWAY_IMAGE_UNKNOWN_DEADLINE_MS: int(1000, DAY_MS).optional(),
  GATEWAY_IMAGE_ARTIFACT_WAIT_MS: int(1, DAY_MS).optional(),
  GATEWAY_FSYNC: z.enum(['always', 'os']).default('os'),
  GATEWAY_ACTOR_IDLE_MS: int(1, DAY_MS).default(10 * 60_000),
  GATEWAY_TEST_MODE: flag.default(false),
  GATEWAY_FAULT_POINTS: z.string().optional(),
  GATEWAY_CHECKOUT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  GATEWAY_CHECKOUT_TOLERANCE_S: int(1, 3600).default(300),
  GATEWAY_COMPAT_ENABLED: flag.default(false),
  GATEWAY_DRAIN_TIMEOUT_MS: int(0, 3_600_000).default(25_000),
  GATEWAY_CAPABILITY_DELIVERY: z.string().default(''),
  GATEWAY_SESSION_RUN_LEASE_MS: int(1000, 3_600_000).default(30_000),
  GATEWAY_SESSION_POLL_MS: int(10, 10_000).default(250),
  GATEWAY_OAUTH_ISSUER: z.string().min(1).optional(),
  GATEWAY_OAUTH_AUDIENCE: z.string().min(1).optional(),
  GATEWAY_OAUTH_JWKS_URL: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).optional(),
  GATEWAY_OAUTH_JWKS_FILE: z.string().min(1).optional(),
  GATEWAY_OAUTH_ACCOUNT_CLAIM: z.string().min(1).max(200).optional(),
  GATEWAY_OAUTH_CLOCK_TOLERANCE_S: int(0, 300).optional(),
  GATEWAY_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DAPR_HOST: z.string().default('127.0.0.1'),
  DAPR_HTTP_PORT: int(1, 65535).default(3500),
  GATEWAY_ACTOR_CALL_TIMEOUT_MS: int(100, 600_000).default(15_000),
  LEDGER_APP_ID: z.string().default('ledger'),
  GATEWAY_OUTBOX_CONFIRM_MS: int(100, 3_600_000).optional(),
  GATEWAY_EVENT_LINGER_MS: int(0, 1000).default(25),
  GATEWAY_API_KEY_CACHE_MS: int(0, 3_600_000).default(API_KEY_CACHE_MAX_MS),
  // The export's memory goal is 200 MB per process: the reader's bound leaves room for what it holds beyond the map.
  GATEWAY_EXPORT_READER_RSS_MB: int(0, 65_536).default(128),
  APP_PORT: int(1, 65535).optional(),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
});

export type GatewayConfig = ReturnType<typeof loadConfig>;

/** After its drain timeout, how long a stopping gateway may still take before it exits on its own (code 1). */
export const DRAIN_HARD_EXIT_AFTER_MS = 15_000;

/**
 * How long a supervisor must let a gateway stop (SIGTERM to exit) before it sends SIGKILL: its
 * drain timeout, read from the environment the gateway gets, and its own hard-exit margin.
 * A SIGKILL before that cuts streams that relayed output before they are charged.
 */
export function gatewayStopGraceMs(env: NodeJS.ProcessEnv): number {
  const parsed = envSchema.shape.GATEWAY_DRAIN_TIMEOUT_MS.safeParse(env.GATEWAY_DRAIN_TIMEOUT_MS);
  if (!parsed.success) throw new ConfigError(`invalid configuration:\n  GATEWAY_DRAIN_TIMEOUT_MS: ${parsed.error.issues[0]?.message}`);
  return parsed.data + DRAIN_HARD_EXIT_AFTER_MS + 5_000;
}

/**
 * How much longer than the provider timeout a hold must live. When the timeout fires the call
 * still has to end and settle (one actor call, milliseconds; on Dapr up to 5 × 1 s of actor
 * retries while an actors app restarts): 10 s covers that. Beyond it, a stream renews its hold
 * while it runs and a pending settle renews it until it lands (docs/money.md), so a TTL this
 * short is enough, but no shorter one: a hold that could expire under a running call would let
 * the call be delivered free.
 */
export const HOLD_TTL_MARGIN_MS = 10_000;
/** In test mode (GATEWAY_TEST_MODE=true), so that tests can watch holds expire in seconds. */
export const TEST_HOLD_TTL_MARGIN_MS = 1000;

export class ConfigError extends Error {}

/** Member/business OAuth: tokens from one issuer, keys from exactly one JWKS source. */
export interface OAuthConfig {
  issuer: string;
  audience: string;
  jwksUrl?: string;
  jwksFile?: string;
  /** The claim that names the gateway account the token acts for. */
  accountClaim: string;
  clockToleranceS: number;
}

const OAUTH_DEFAULT_ACCOUNT_CLAIM = 'payg_account';
const OAUTH_DEFAULT_CLOCK_TOLERANCE_S = 5;

/**
 * All or nothing: a half-configured issuer would leave member routes answering 503 while the
 * operator believes OAuth is on, so any GATEWAY_OAUTH_* setting requires the whole set.
 */
function oauthConfig(e: z.infer<typeof envSchema>): OAuthConfig | undefined {
  const given = [e.GATEWAY_OAUTH_ISSUER, e.GATEWAY_OAUTH_AUDIENCE, e.GATEWAY_OAUTH_JWKS_URL, e.GATEWAY_OAUTH_JWKS_FILE, e.GATEWAY_OAUTH_ACCOUNT_CLAIM, e.GATEWAY_OAUTH_CLOCK_TOLERANCE_S];
  if (given.every((value) => value === undefined)) return undefined;
  const problems: string[] = [];
  if (e.GATEWAY_OAUTH_ISSUER === undefined) problems.push('GATEWAY_OAUTH_ISSUER: required when OAuth is configured');
  if (e.GATEWAY_OAUTH_AUDIENCE === undefined) problems.push('GATEWAY_OAUTH_AUDIENCE: required when OAuth is configured');
  if (e.GATEWAY_OAUTH_JWKS_URL === undefined && e.GATEWAY_OAUTH_JWKS_FILE === undefined) {
    problems.push('GATEWAY_OAUTH_JWKS_URL or GATEWAY_OAUTH_JWKS_FILE: one is required when OAuth is configured');
  }
  // Whoever can change the key set in transit can mint tokens: plain http only on loopback.
  if (e.GATEWAY_OAUTH_JWKS_URL?.startsWith('http:') && !/^http:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?\//.test(e.GATEWAY_OAUTH_JWKS_URL)) {
    problems.push('GATEWAY_OAUTH_JWKS_URL: must be https (plain http is accepted only on loopback)');
  }
  if (e.GATEWAY_OAUTH_JWKS_URL !== undefined && e.GATEWAY_OAUTH_JWKS_FILE !== undefined) {
    problems.push('GATEWAY_OAUTH_JWKS_URL and GATEWAY_OAUTH_JWKS_FILE: set only one');
  }
  if (problems.length > 0) throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
  return {
    issuer: e.GATEWAY_OAUTH_ISSUER!,
    audience: e.GATEWAY_OAUTH_AUDIENCE!,
    jwksUrl: e.GATEWAY_OAUTH_JWKS_URL,
    jwksFile: e.GATEWAY_OAUTH_JWKS_FILE === undefined ? undefined : resolve(e.GATEWAY_OAUTH_JWKS_FILE),
    accountClaim: e.GATEWAY_OAUTH_ACCOUNT_CLAIM ?? OAUTH_DEFAULT_ACCOUNT_CLAIM,
    clockToleranceS: e.GATEWAY_OAUTH_CLOCK_TOLERANCE_S ?? OAUTH_DEFAULT_CLOCK_TOLERANCE_S,
  };
}

/** Test-only: a fault point kills the process on purpose, so it is refused outside test mode. */
function faultPointsOf(value: string | undefined, testMode: boolean): string[] {
  if (value === undefined || value.trim() === '') return [];
  if (!testMode) throw new ConfigError('invalid configuration:\n  GATEWAY_FAULT_POINTS: fault points kill the process on purpose; they are accepted only with GATEWAY_TEST_MODE=true');
  try {
    return parseFaultPoints(value);
  } catch (error) {
    throw new ConfigError(`invalid configuration:\n  GATEWAY_FAULT_POINTS: ${(error as Error).message}`);
  }
}

/** The only wire the trace exporter speaks (lib/tracing.ts uses the OTLP/HTTP protobuf exporter). */
export const OTLP_PROTOCOL = 'http/protobuf';

const otlpEndpoint = z.url({ protocol: /^https?$/, error: 'must be an absolute http or https URL (such as http://127.0.0.1:4318)' });

/** Blank counts as unset, as the OpenTelemetry SDK itself reads its variables. */
function otelValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

/**
 * Where this process's spans go, read from the OpenTelemetry SDK's own variables, or undefined
 * when they ask for no export. The SDK takes a malformed endpoint for its default
 * (127.0.0.1:4318) with only a diagnostic nobody sees, and our exporter cannot honour another
 * protocol, so either stops the start instead, naming the variable. Read only when export is
 * asked for: a value nothing will use stops nothing.
 */
export function traceExportOf(env: NodeJS.ProcessEnv = process.env): { url: string } | undefined {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return undefined;
  if ((env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase() === 'none') return undefined;
  const tracesEndpoint = otelValue(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = otelValue(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (tracesEndpoint === undefined && endpoint === undefined) return undefined;
  const problems: string[] = [];
  for (const [name, value] of [['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', tracesEndpoint], ['OTEL_EXPORTER_OTLP_ENDPOINT', endpoint]] as const) {
    const parsed = otlpEndpoint.safeParse(value);
    if (value !== undefined && !parsed.success) problems.push(`${name}: ${parsed.error.issues[0]?.message}`);
  }
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = otelValue(env, name);
    if (protocol !== undefined && protocol !== OTLP_PROTOCOL) problems.push(`${name}: must be ${OTLP_PROTOCOL} (the only protocol the trace exporter speaks), not ${JSON.stringify(protocol)}`);
  }
  if (problems.length > 0) throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
  // The SDK's own rule: the traces endpoint is taken as it is, the general one gets /v1/traces.
  if (tracesEndpoint !== undefined) return { url: new URL(tracesEndpoint).toString() };
  return endpoint === undefined ? undefined : { url: `${endpoint.replace(/\/?$/, '/')}v1/traces` };
}

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
  const faultPoints = faultPointsOf(e.GATEWAY_FAULT_POINTS, e.GATEWAY_TEST_MODE);
  const imageDeadlineMs = e.GATEWAY_IMAGE_UNKNOWN_DEADLINE_MS ?? IMAGE_UNKNOWN_DEADLINE_MS;
  if (e.GATEWAY_OUTBOX_CONFIRM_MS !== undefined && !e.GATEWAY_TEST_MODE) {
    throw new ConfigError('invalid configuration:\n  GATEWAY_OUTBOX_CONFIRM_MS: the outbox confirmation round may be moved only with GATEWAY_TEST_MODE=true');
  }
  if (e.GATEWAY_API_KEY_CACHE_MS > API_KEY_CACHE_MAX_MS) {
    throw new ConfigError(`invalid configuration:\n  GATEWAY_API_KEY_CACHE_MS: ${e.GATEWAY_API_KEY_CACHE_MS} ms is longer than ${API_KEY_CACHE_MAX_MS} ms; a revoked API key must stop working within ${API_KEY_CACHE_MAX_MS} ms on every gateway instance. Set it to at most ${API_KEY_CACHE_MAX_MS} (0: no cache)`);
  }
  const maxBodyBytes = Math.min(e.GATEWAY_MAX_BODY_BYTES, e.GATEWAY_PROXY_MAX_BODY_BYTES, HARD_BODY_LIMIT);
  if (e.GATEWAY_ACCOUNT_BODY_BYTES < maxBodyBytes) {
    throw new ConfigError(`invalid configuration:\n  GATEWAY_ACCOUNT_BODY_BYTES: ${e.GATEWAY_ACCOUNT_BODY_BYTES} bytes is less than one body may be (${maxBodyBytes}, GATEWAY_MAX_BODY_BYTES); such a body could never be received. Set it to at least ${maxBodyBytes}`);
  }
  if (e.GATEWAY_BODY_BYTES_IN_FLIGHT < maxBodyBytes) {
    throw new ConfigError(`invalid configuration:\n  GATEWAY_BODY_BYTES_IN_FLIGHT: ${e.GATEWAY_BODY_BYTES_IN_FLIGHT} bytes is less than one body may be (${maxBodyBytes}, GATEWAY_MAX_BODY_BYTES); such a body could never be received. Set it to at least ${maxBodyBytes}`);
  }
  const oauth = oauthConfig(e);
  const holdTtlMs = e.GATEWAY_HOLD_TTL_MS ?? providerTimeoutMs + 60_000;
  const margin = e.GATEWAY_TEST_MODE ? TEST_HOLD_TTL_MARGIN_MS : HOLD_TTL_MARGIN_MS;
  if (holdTtlMs < providerTimeoutMs + margin) {
    throw new ConfigError(`invalid configuration:\n  GATEWAY_HOLD_TTL_MS: ${holdTtlMs} ms does not outlast GATEWAY_PROVIDER_TIMEOUT_MS (${providerTimeoutMs} ms) by ${margin} ms; a hold could expire under a call still running. Set it to at least ${providerTimeoutMs + margin}`);
  }
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: resolve(e.GATEWAY_DATA_DIR),
    adminToken: e.GATEWAY_ADMIN_TOKEN,
    catalogFile: e.GATEWAY_CATALOG_FILE ?? resolve(__dirname, '../catalog/default-catalog.json'),
    actorHost: e.GATEWAY_ACTOR_HOST,
    /** The text service's own limit and the proxy's; the upstream's comes from the provider. */
    maxBodyBytes,
    /** The request bodies one account may have on the way at once (the rest refused 429 while they are received). */
    accountBodyBytes: e.GATEWAY_ACCOUNT_BODY_BYTES,
    /** The request bodies this instance's calls in progress may hold, every account together (from a body's first byte until its answer is finished). */
    bodyBytesInFlight: e.GATEWAY_BODY_BYTES_IN_FLIGHT,
    /** A request must be received whole (headers and body) within this (the HTTP server's requestTimeout). */
    requestTimeoutMs: e.GATEWAY_REQUEST_TIMEOUT_MS,
    /** The session event streams one account may have open at once (the next refused 429). */
    accountEventStreams: e.GATEWAY_ACCOUNT_EVENT_STREAMS,
    accountCalls: e.GATEWAY_ACCOUNT_CALLS,
    /** The top-up orders one account may create on the console route per UTC day (the next refused 429). */
    ordersPerDay: e.GATEWAY_ORDERS_PER_DAY,
    providerTimeoutMs,
    /**
     * Routing over a profile's upstreams (docs/providers.md, "Routing"): an attempt with another
     * upstream behind it is given up when not answered within attemptTimeoutMs (at most the
     * provider timeout); `failures` consecutive failures open an upstream's circuit for cooldownMs.
     */
    routing: {
      attemptTimeoutMs: Math.min(e.GATEWAY_UPSTREAM_ATTEMPT_TIMEOUT_MS, providerTimeoutMs),
      circuit: { failures: e.GATEWAY_CIRCUIT_FAILURES, cooldownMs: e.GATEWAY_CIRCUIT_COOLDOWN_MS },
    },
    /** A hold outlives the provider timeout by HOLD_TTL_MARGIN_MS at least; its expiry ends it if its request vanished. */
    holdTtlMs,
    /** A stream records its progress on its hold (and renews it) every this many output tokens or ms, whichever first. */
    holdProgress: { everyTokens: e.GATEWAY_HOLD_PROGRESS_TOKENS, everyMs: e.GATEWAY_HOLD_PROGRESS_MS },
    /**
     * Funds leases on the chat path (docs/money.md), on by default on both hosts: on Dapr each
     * actor call is a round trip through two sidecars; on the embedded host a chat then makes one
     * batched actor turn instead of two (a third less CPU per chat under load, bench/ab.ts).
     * A lease lives GATEWAY_HOLD_TTL_MS without news, like a hold.
     */
    fundsLease: { enabled: (e.GATEWAY_FUNDS_LEASE ?? 'on') === 'on', idleMs: e.GATEWAY_FUNDS_LEASE_IDLE_MS, maxAmount: e.GATEWAY_FUNDS_LEASE_MAX },
    images: {
      /** Frozen into each task at reservation (UNKNOWN_IMAGE_V1). */
      deadlineMs: imageDeadlineMs,
      /** An image hold outlives the deadline, which releases it; its own expiry is the backstop. */
      holdTtlMs: imageDeadlineMs + holdTtlMs,
      /** How long a provider call may run on after its client got 503 (a late artifact can still arrive). */
      artifactWaitMs: Math.max(providerTimeoutMs, e.GATEWAY_IMAGE_ARTIFACT_WAIT_MS ?? imageDeadlineMs + holdTtlMs),
    },
    fsync: e.GATEWAY_FSYNC === 'always',
    /** Embedded host: an actor activation without a call for this long is dropped from memory. */
    actorIdleMs: e.GATEWAY_ACTOR_IDLE_MS,
    testMode: e.GATEWAY_TEST_MODE,
    /** Test-only crash points (lib/fault-points.ts), read there from the environment; listed here once checked. */
    faultPoints,
    logLevel: e.GATEWAY_LOG_LEVEL,
    /** Checkout callbacks: HMAC-SHA256 secret (unset: the callback route answers 503) and timestamp tolerance. */
    checkout: { secret: e.GATEWAY_CHECKOUT_SECRET, toleranceS: e.GATEWAY_CHECKOUT_TOLERANCE_S },
    /** Member/business OAuth; undefined: off (member routes answer 503 oauth_disabled). */
    oauth,
    /** The deployment condition of the compatibility gate (docs/compat.md). */
    compatEnabled: e.GATEWAY_COMPAT_ENABLED,
    /** How long a SIGTERM lets calls in flight finish before aborting them (each then settles or releases). */
    drainTimeoutMs: e.GATEWAY_DRAIN_TIMEOUT_MS,
    /** Delivery channels the operator accepted, per capability (`agent_run:session_events,…`; docs/capabilities.md). */
    capabilityDelivery: e.GATEWAY_CAPABILITY_DELIVERY,
    /** Prototype sessions (docs/sessions.md): a run's lease, pushed out while its gateway reports; how often a reader polls the session. */
    sessions: { runLeaseMs: e.GATEWAY_SESSION_RUN_LEASE_MS, pollMs: e.GATEWAY_SESSION_POLL_MS },
    /**
     * Dapr: how long the gateway waits for one actor call. The default outlasts Dapr's actor retry
     * window (5 × 1 s, which rides out a restarting actors app or a moving actor) and one 5 s
     * timeout of a stalled app with its retry (dapr/resiliency.yaml).
     */
    dapr: { host: e.DAPR_HOST, httpPort: e.DAPR_HTTP_PORT, ledgerAppId: e.LEDGER_APP_ID, actorCallTimeoutMs: e.GATEWAY_ACTOR_CALL_TIMEOUT_MS },
    /** Test mode only: the pause before the Dapr outbox's first confirmation round (undefined: 1 s; docs/money.md). */
    outboxConfirmMs: e.GATEWAY_OUTBOX_CONFIRM_MS,
    /** Dapr actors app: how long committed events of one topic are gathered into one pub/sub message (0: one message per turn). */
    eventLingerMs: e.GATEWAY_EVENT_LINGER_MS,
    /** How long an API key lookup (found or not) is reused: the bound on a revoked key still working (<= 1 s). */
    apiKeyCacheMs: e.GATEWAY_API_KEY_CACHE_MS,
    /** Embedded: an export's rows are read in a child process, ended past this resident set (MB); 0: read in the gateway. */
    exportReaderRssMb: e.GATEWAY_EXPORT_READER_RSS_MB,
    appPort: e.APP_PORT,
    redisUrl: e.REDIS_URL,
  };
}
