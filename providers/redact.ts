// What of an upstream's own words may reach the gateway's customer (a refusal's reason helps
// them fix their request) and what may reach its log. Neither ever holds a configured secret;
// the customer's copy also holds nothing internal: no provider entry name, no URL, host or IP
// address, nothing shaped like an API key, and it is bounded.

/** The most characters of an upstream's reason a customer is shown. */
export const CUSTOMER_DETAIL_LIMIT = 500;

/**
 * The most characters of an upstream's reason the patterns below are run on. Their time grows
 * with the square of a text without spaces (each is tried from every word boundary to the end),
 * and an upstream may quote a long input of the request back: 8 KiB of "a-a-…" held the event
 * loop for a quarter of a second, 32 KiB for seconds. The customer sees less than this anyway.
 */
const EXAMINED_LIMIT = 2 * CUSTOMER_DETAIL_LIMIT;

/** What the gateway knows about one upstream that must stay inside it. */
export interface Internals {
  /** The provider entry's name (the catalog's `providers` key). */
  name: string;
  /** The upstream's base URL. */
  baseUrl: string;
  /** Configured secrets: the key, any credential header's value. */
  secrets: readonly string[];
}

/** Header names whose values are credentials. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'x-api-key', 'api-key', 'proxy-authorization']);

/** The secrets among configured headers (a bearer token without its scheme). */
export function headerSecrets(headers: Record<string, string> | undefined): string[] {
  const secrets: string[] = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!CREDENTIAL_HEADERS.has(name.toLowerCase()) || !value) continue;
    secrets.push(value);
    const token = /^\s*(?:bearer|basic)\s+(.+)$/i.exec(value)?.[1];
    if (token) secrets.push(token.trim());
  }
  return secrets;
}

/** `text` without any configured secret: for the log. */
export function withoutSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  // Longest first, so that a token inside its "Bearer …" header value is covered either way.
  for (const secret of [...secrets].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length)) out = out.split(secret).join('[redacted]');
  return out;
}

/** Anything shaped like an API key or a credential: OpenAI's and Anthropic's sk-…, masked echoes (sk-plat****wxyz), bearer tokens. */
const KEY_LIKE = /\b(?:sk|pk|rk|sess)-[A-Za-z0-9*_\-.]{4,}|\bBearer\s+\S+|\b[A-Za-z0-9_-]{2,}\*{3,}[A-Za-z0-9_-]*|\*{4,}[A-Za-z0-9_-]*/gi;
/** Any URL, whatever its scheme. */
const URL_LIKE = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;
/** IPv4 (with a port), bracketed IPv6, and a dotted host (or localhost) with a port. */
const ADDRESS_LIKE = /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b|\[[0-9a-f:.]+\](?::\d{1,5})?|\b(?:localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)+):\d{2,5}\b/gi;

/**
 * The customer's copy of an upstream's reason: secrets, key-like tokens, URLs, addresses and
 * the entry's own name and host replaced, control characters flattened, at most
 * CUSTOMER_DETAIL_LIMIT characters. Empty when nothing is left.
 */
export function customerDetail(text: string, internals: Internals): string {
  let out = withoutSecrets(text, internals.secrets).replace(/[\u0000-\u001f\u007f]+/g, ' ');
  if (out.length > EXAMINED_LIMIT) {
    // A word cut in half (a URL, an address, a key) might no longer be recognised: it is left
    // out whole, unless it is the only one (then its start is what the patterns see).
    const space = out[EXAMINED_LIMIT] === ' ' ? EXAMINED_LIMIT : out.lastIndexOf(' ', EXAMINED_LIMIT);
    out = `${out.slice(0, space > 0 ? space : EXAMINED_LIMIT)} …`;
  }
  out = out.replace(URL_LIKE, '[url]');
  const host = hostOf(internals.baseUrl);
  if (host) out = out.split(host).join('[address]');
  out = out.replace(ADDRESS_LIKE, '[address]').replace(KEY_LIKE, '[redacted]');
  if (internals.name) out = out.replace(new RegExp(`(?<![A-Za-z0-9_-])${escape(internals.name)}(?![A-Za-z0-9_-])`, 'g'), 'the provider');
  out = out.replace(/\s+/g, ' ').trim();
  return out.length > CUSTOMER_DETAIL_LIMIT ? `${out.slice(0, CUSTOMER_DETAIL_LIMIT - 1)}…` : out;
}

function hostOf(baseUrl: string): string | undefined {
  try {
    return new URL(baseUrl).hostname || undefined;
  } catch {
    return undefined;
  }
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
