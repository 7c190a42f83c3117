// The web console: sign in with an API key (customer) or the operator token, then the views of
// that role. Served by the gateway at /console; talks to the gateway's own routes only.

import 'uplot/dist/uPlot.min.css';
import './console.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { json, restoreCredential, setCredential, type Credential, type Role } from './api';
import { CustomerView } from './customer';
import { OperatorView } from './operator';
import { Field, Select } from './ui';

const TABS: Record<Role, [string, string][]> = {
  customer: [['overview', 'Overview'], ['bills', 'Bills'], ['usage', 'Usage'], ['images', 'Image tasks'], ['orders', 'Orders'], ['limits', 'Limits']],
  operator: [['accounts', 'Accounts'], ['reconciliation', 'Reconciliation'], ['audit', 'Audit log']],
};

/** Checks a credential with a read its role may make; throws the gateway's refusal, said plainly. */
async function verify(credential: Credential): Promise<void> {
  const path = credential.role === 'customer' ? '/api/distribution/api-credit/balance' : '/admin/v1/accounts?limit=1';
  await json(path, { token: credential.token });
}

function SignIn({ onSignedIn }: { onSignedIn: (c: Credential) => void }) {
  const [role, setRole] = useState<Role>('customer');
  const [token, setToken] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setBusy(true);
    setError(undefined);
    const credential = { role, token: token.trim() };
    try {
      await verify(credential);
      setCredential(credential);
      onSignedIn(credential);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="signin">
      <h1>PAYG gateway console</h1>
      <form class="card" onSubmit={(e) => { e.preventDefault(); void submit(); }}>
        <Select label="Sign in as" name="role" value={role} onChange={(v) => setRole(v as Role)} options={[['customer', 'Customer (API key or member token)'], ['operator', 'Operator (admin token)']]} />
        <Field label={role === 'customer' ? 'API key' : 'Admin token'} name="token" type="password" autoComplete="off" value={token} required onInput={setToken} />
        <button type="submit" disabled={busy}>Sign in</button>
        {error && <p class="error" role="alert" id="signin-error">{error}</p>}
        <p class="muted">The key stays in this tab's memory and session storage: it is sent only in the Authorization header to this gateway and forgotten when the tab closes or you sign out.</p>
      </form>
    </main>
  );
}

/**
 * The address's hash: `#<view>` or `#<view>/<item>`: an operator's account
 * (`#accounts/<accountId>`, `item` decoded), or the page and filters of a customer's list
 * (`#bills/page=2&model=…`, `raw`, a query string).
 */
function routeOf(role: Role, hash: string): { tab: string; item?: string; raw?: string } {
  const [wanted = '', raw] = hash.replace(/^#/, '').split('/', 2);
  if (!TABS[role].some(([id]) => id === wanted)) return { tab: TABS[role][0]![0] };
  if (!raw) return { tab: wanted };
  try {
    return { tab: wanted, item: decodeURIComponent(raw), raw };
  } catch {
    return { tab: wanted, raw }; // a malformed item (a hand-typed %): the view's list
  }
}

function App() {
  const [credential, setCurrent] = useState<Credential | null>(restoreCredential());
  // The whole hash, so that Back and Forward move between views and an operator's accounts too.
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onHash = () => setHash(location.hash);
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  // The tab's title names the view too (the browser's tabs, its history, a screen reader's first words).
  const viewLabel = credential ? TABS[credential.role].find(([id]) => id === routeOf(credential.role, hash).tab)?.[1] : undefined;
  useEffect(() => { document.title = viewLabel ? `${viewLabel} · PAYG gateway console` : 'PAYG gateway console'; }, [viewLabel]);
  if (!credential) return <SignIn onSignedIn={(c) => { setCurrent(c); setHash(location.hash); }} />;
  const { tab, item, raw } = routeOf(credential.role, hash);
  const signOut = () => { setCredential(null); setCurrent(null); location.hash = ''; };
  return (
    <>
      {/* The hash names the view: the skip link moves the focus without changing it. */}
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>Skip to the content</a>
      <header>
        <p class="brand">PAYG console · {credential.role === 'customer' ? 'customer' : 'operator'}</p>
        <nav aria-label="Views">
          <ul>{TABS[credential.role].map(([id, label]) => <li><a href={`#${id}`} aria-current={tab === id ? 'page' : undefined}>{label}</a></li>)}</ul>
        </nav>
        <button type="button" onClick={signOut}>Sign out</button>
      </header>
      <main id="main" tabIndex={-1}>
        <h1 class="visually-hidden">{TABS[credential.role].find(([id]) => id === tab)?.[1]}</h1>
        {credential.role === 'customer' ? <CustomerView tab={tab} at={raw} /> : <OperatorView tab={tab} item={item} />}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
