// The console's only way to the gateway: its existing HTTP routes, same origin, with the
// credential in an Authorization header. The credential lives in this module's memory and, so a
// reload keeps the session, in sessionStorage (this tab only, gone when it closes); never in a
// URL, a cookie or a log.

export type Role = 'customer' | 'operator';
export interface Credential { role: Role; token: string }

const STORAGE_KEY = 'payg-console-credential';
let current: Credential | null = null;

export function restoreCredential(): Credential | null {
  if (current) return current;
  try {
    const saved = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Credential | null;
    if (saved && (saved.role === 'customer' || saved.role === 'operator') && typeof saved.token === 'string') current = saved;
  } catch { /* nothing kept */ }
  return current;
}

export function setCredential(credential: Credential | null): void {
  current = credential;
  if (credential) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(credential));
  else sessionStorage.removeItem(STORAGE_KEY);
  // What the session kept (sessionValue) belongs to the credential: gone with it.
  sessionStorage.removeItem(SESSION_VALUES_KEY);
}

const SESSION_VALUES_KEY = 'payg-console-session';

/** Every value the session keeps (none when nothing readable is stored). */
function sessionValues(): Record<string, unknown> {
  try {
    return (JSON.parse(sessionStorage.getItem(SESSION_VALUES_KEY) ?? '{}') as Record<string, unknown>) ?? {};
  } catch {
    return {};
  }
}

/** A value the session keeps across views and reloads (this tab only), cleared at sign-in and sign-out. */
export function sessionValue<T>(name: string): T | undefined {
  return sessionValues()[name] as T | undefined;
}

export function setSessionValue(name: string, value: unknown): void {
  sessionStorage.setItem(SESSION_VALUES_KEY, JSON.stringify({ ...sessionValues(), [name]: value }));
}

/** An error answer of the gateway: its status, code and message, said plainly. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) { super(message); }
}

const PLAIN: Record<number, string> = {
  401: 'The gateway did not accept this credential: it is wrong, revoked or expired.',
  403: 'This credential may not do that.',
  429: 'Too many requests for now: a rate limit was reached.',
};

/** A suspended account's 403 is not about what the credential may do: said as what it is. */
const SUSPENDED = 'This account is suspended: the gateway refuses its keys and member tokens until the operator lifts the suspension';

/** The code and message of the gateway's error body in `text`; `message` (and code `error`) when it is not one. */
function errorFields(text: string, message: string): { code: string; message: string } {
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
    return { code: body.error?.code ?? 'error', message: body.error?.message ?? message };
  } catch {
    return { code: 'error', message };
  }
}

async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  const { code, message } = errorFields(text, `${res.status} ${res.statusText}`);
  const plain = code === 'account_suspended' ? `${SUSPENDED}; the figures shown are the last read.` : PLAIN[res.status];
  return new ApiError(res.status, code, plain ? `${plain} (${message})` : message);
}

let refusedListener: ((error: ApiError) => void) | undefined;

/**
 * Who is told when the gateway refuses the signed-in credential (401) on any request: the view
 * stops polling at the first refusal, whichever request met it. Returns the way to stop listening.
 */
export function onCredentialRefused(listener: (error: ApiError) => void): () => void {
  refusedListener = listener;
  return () => { if (refusedListener === listener) refusedListener = undefined; };
}

interface RequestInit { method?: string; body?: unknown; token?: string; headers?: Record<string, string> }

export async function request(path: string, init: RequestInit = {}): Promise<Response> {
  const token = init.token ?? current?.token;
  const headers: Record<string, string> = { ...init.headers };
  if (token) headers.authorization = `Bearer ${token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body), cache: 'no-store' });
  } catch {
    // No answer at all (offline, the gateway down, the connection cut): the browser's own words
    // ("Failed to fetch") say nothing to a person. A change asked for may or may not have been made.
    throw new ApiError(0, 'unreachable', `The gateway could not be reached (no answer came back): check the connection and try again.${(init.method ?? 'GET') === 'GET' ? '' : ' What was asked may or may not have been done.'}`);
  }
  if (!res.ok) {
    const error = await errorOf(res);
    // The signed-in credential refused (not a key being tried at sign-in, which passes its own token).
    if (res.status === 401 && init.token === undefined && token !== undefined) refusedListener?.(error);
    throw error;
  }
  return res;
}

export async function json<T>(path: string, init?: RequestInit): Promise<T> {
  const res = await request(path, init);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/**
 * A random (version 4) UUID for an Idempotency-Key. From getRandomValues, which a page served
 * over plain HTTP has too (crypto.randomUUID is only in secure contexts).
 */
export function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A query string of the parameters that have a value. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') q.set(name, String(value));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The hidden frame exports are posted into: a refusal loads there (a file the browser saves does not). */
let downloadFrame: HTMLIFrameElement | undefined;

/**
 * Saves an export as a file the browser writes to disk as it arrives: a form is posted to the
 * export route (its POST twin, which takes the credential in the form's access_token field, since
 * a form can send no header), into a hidden frame of this page. A fetch would hold the whole file
 * in the page's memory before it could be saved (hundreds of megabytes for a long history). The
 * credential is in the form's body, never in a URL. A refusal (a revoked key, a filter the
 * gateway refuses) is an answer the frame shows instead of a file: it is read from there and
 * given to `onRefused` (a 401 also to the credential-refused listener, as any request's).
 */
export function download(path: string, fields: Record<string, string | undefined>, onRefused: (error: ApiError) => void): void {
  const token = current?.token;
  if (!token) throw new ApiError(401, 'unauthorized', PLAIN[401]!);
  if (!downloadFrame) {
    downloadFrame = document.createElement('iframe');
    downloadFrame.name = 'payg-download';
    downloadFrame.title = 'downloads';
    downloadFrame.hidden = true;
    document.body.append(downloadFrame);
  }
  const frame = downloadFrame;
  frame.onload = () => {
    // A browser shows a JSON answer as text, in a <pre> (beside a viewer's own controls in some).
    const shown = frame.contentDocument;
    const text = (shown?.querySelector('pre') ?? shown?.body)?.textContent ?? '';
    if (text.trim() === '') return;
    const { code, message } = errorFields(text, text.slice(0, 300));
    // The frame tells no status: the code does.
    const status = code === 'unauthorized' ? 401 : code === 'account_suspended' || code === 'credential_family_mismatch' ? 403 : 400;
    const plain = code === 'account_suspended' ? `${SUSPENDED}.` : PLAIN[status];
    const error = new ApiError(status, code, plain ? `The export was refused. ${plain} (${message})` : `The export was refused: ${message}`);
    if (status === 401) refusedListener?.(error);
    onRefused(error);
  };
  const form = document.createElement('form');
  form.method = 'POST';
  form.action = path;
  form.target = frame.name;
  form.hidden = true;
  for (const [name, value] of Object.entries({ ...fields, access_token: token })) {
    if (value === undefined || value === '') continue;
    const input = document.createElement('input');
    input.type = 'hidden';
    input.name = name;
    input.value = value;
    form.append(input);
  }
  document.body.append(form);
  form.submit();
  form.remove();
}
