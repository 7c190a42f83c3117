// The operator's view, signed in with the admin token: accounts (search, detail, limits,
// suspension), keys (create and show once, revoke, rotate, limits), credits and corrections with
// their reference, reconciliation and the audit log. Everything is the operator API (/admin/v1).

import { useState } from 'preact/hooks';
import { json, query } from './api';
import { AUDIT_ACTIONS } from '../../lib/audit-actions';
import { dayRange, LIMITS, limitLabel, parseLimits, parseUsd, usd, when, type LimitName } from './format';
import { ErrorBox, Field, Outcome, Section, Select, Table, useAction, useLoad } from './ui';

interface Account { accountId: string; name: string; createdAt: string; suspendedAt: string | null; limits: Limits }
interface Key { apiKeyId: string; prefix: string; name: string | null; scopes: string[]; state: string; effectiveState: string; createdAt: string; lastUsedAt: string | null; revokedAt: string | null; limits: Limits }
interface Detail extends Account { pools: { pool: string; balance: number; held: number; available: number; leased: number }[]; keys: Key[] }
interface Audit { id: string; at: string; who: string; action: string; accountId: string | null; apiKeyId: string | null; requestId: string; details: Record<string, unknown> }
interface Reconciliation { accounts: number; differences: { accountId: string; pool: string; ledger: number; actor: number; ledgerRunningTotal: number; bills?: { ledger: number; actor: number }; missing: { id: string; type: string }[] }[] }
type Limits = Partial<Record<LimitName, number>>;
const ADMIN = '/admin/v1';

/** `item`: the account open in the Accounts view, from the address (`#accounts/<accountId>`), so Back returns to the list. */
export function OperatorView({ tab, item }: { tab: string; item?: string }) {
  if (tab === 'reconciliation') return <ReconciliationView />;
  if (tab === 'audit') return <AuditView />;
  const go = (hash: string) => {
    location.hash = hash;
    document.getElementById('main')?.focus();
  };
  // Keyed by the account: another account opened straight from this one (a link pasted in the
  // address) starts afresh, never with this one's new key shown or its key chosen in the forms.
  return item ? <AccountDetail key={item} accountId={item} onBack={() => go('accounts')} /> : <Accounts onOpen={(accountId) => go(`accounts/${encodeURIComponent(accountId)}`)} />;
}

function Accounts({ onOpen }: { onOpen: (accountId: string) => void }) {
  const [search, setSearch] = useState('');
  const [name, setName] = useState('');
  const [before, setBefore] = useState<string[]>([]);
  const list = useLoad(() => json<{ items: Account[]; next: string | null }>(`${ADMIN}/accounts${query({ limit: 20, name: name || undefined, before: before.at(-1) })}`), [name, before]);
  const [newName, setNewName] = useState('');
  const create = useAction();
  return (
    <>
      <Section title="Accounts">
        <form class="filters" role="search" onSubmit={(e) => { e.preventDefault(); setBefore([]); setName(search.trim()); }}>
          <Field label="Name contains" name="search" value={search} onInput={setSearch} />
          <button type="submit">Search</button>
        </form>
        <ErrorBox error={list.error} />
        {list.data && <Table caption="Accounts" rows={list.data.items} rowKey={(a) => a.accountId} empty="No account matches." columns={[
          { label: 'Name', cell: (a) => <button type="button" class="link name" onClick={() => onOpen(a.accountId)}>{a.name}</button> },
          { label: 'Account', cell: (a) => <code>{a.accountId}</code> },
          { label: 'Created', cell: (a) => when(a.createdAt) },
          { label: 'State', cell: (a) => (a.suspendedAt ? <span class="bad">suspended</span> : 'active') },
        ]} />}
        <nav class="pager" aria-label="Account pages">
          <button type="button" disabled={before.length === 0} onClick={() => setBefore(before.slice(0, -1))}>Newer</button>
          <button type="button" disabled={!list.data?.next} onClick={() => setBefore([...before, list.data!.next!])}>Older</button>
        </nav>
      </Section>
      <Section title="New account">
        <form class="filters" onSubmit={(e) => { e.preventDefault(); void create.run(async () => { const a = await json<Account>(`${ADMIN}/accounts`, { method: 'POST', body: { name: newName } }); setNewName(''); list.reload(); return `Created ${a.accountId}.`; }); }}>
          <Field label="Account name" name="account-name" value={newName} required onInput={setNewName} />
          <button type="submit" disabled={create.busy}>Create the account</button>
        </form>
        <Outcome action={create} />
      </Section>
    </>
  );
}

function AccountDetail({ accountId, onBack }: { accountId: string; onBack: () => void }) {
  const detail = useLoad(() => json<Detail>(`${ADMIN}/accounts/${encodeURIComponent(accountId)}`), [accountId]);
  const audit = useLoad(() => json<{ items: Audit[] }>(`${ADMIN}/audit${query({ accountId, limit: 20 })}`), [accountId], detail.data);
  const action = useAction();
  const [shown, setShown] = useState<{ apiKeyId: string; apiKey: string }>();
  const copying = useAction();
  const [keyName, setKeyName] = useState('');
  const act = (fn: () => Promise<string>) => action.run(async () => { const done = await fn(); detail.reload(); return done; });
  // What cannot be taken back, or stops a customer's calls, is asked once more (inside the action,
  // so that a double-click asks once): cancelled, nothing is sent.
  const actIfConfirmed = (question: string, fn: () => Promise<string>) => action.run(async () => {
    if (!confirm(question)) return;
    const done = await fn();
    detail.reload();
    return done;
  });
  const d = detail.data;
  return (
    <>
      <button type="button" onClick={onBack}>← All accounts</button>
      <ErrorBox error={detail.error} />
      {d && <>
        <Section title={`Account ${d.name}`} id="account">
          <p><code>{d.accountId}</code>, created {when(d.createdAt)}, {d.suspendedAt ? <span class="bad">suspended since {when(d.suspendedAt)}</span> : 'active'}.</p>
          <Table caption="Pools" rows={d.pools} rowKey={(p) => p.pool} columns={[
            { label: 'Pool', cell: (p) => p.pool },
            { label: 'Balance', numeric: true, cell: (p) => <span data-pool-balance={p.pool} data-nano={p.balance}>{usd(p.balance)}</span> },
            { label: 'Held', numeric: true, cell: (p) => usd(p.held) },
            { label: 'Leased', numeric: true, cell: (p) => usd(p.leased) },
            { label: 'Available', numeric: true, cell: (p) => usd(p.available) },
          ]} />
          <div class="actions">
            <button type="button" disabled={action.busy} onClick={() => (d.suspendedAt
              ? act(async () => { await json(`${ADMIN}/accounts/${accountId}/unsuspend`, { method: 'POST', body: {} }); return 'Account resumed.'; })
              : actIfConfirmed(`Suspend the account ${d.name}? Every call with its keys and member tokens is refused until it is unsuspended.`, async () => { await json(`${ADMIN}/accounts/${accountId}/suspend`, { method: 'POST', body: {} }); return 'Account suspended: its keys are refused.'; }))}>
              {d.suspendedAt ? 'Unsuspend' : 'Suspend'}
            </button>
          </div>
          <Outcome action={action} />
        </Section>
        <Section title="API keys" id="keys">
          <form class="filters" onSubmit={(e) => { e.preventDefault(); void act(async () => {
            const key = await json<{ apiKeyId: string; apiKey: string }>(`${ADMIN}/accounts/${accountId}/api-keys`, { method: 'POST', body: keyName ? { name: keyName } : {} });
            setShown(key); setKeyName(''); return `Key ${key.apiKeyId} created.`;
          }); }}>
            <Field label="Key name (optional)" name="key-name" value={keyName} onInput={setKeyName} />
            <button type="submit" disabled={action.busy}>Create a key</button>
          </form>
          {shown && <div class="once" role="status">
            <p>The new key <code>{shown.apiKeyId}</code>, shown this once: copy it now.</p>
            <p><code id="new-api-key">{shown.apiKey}</code></p>
            <div class="actions">
              <button type="button" onClick={() => copying.run(async () => {
                // The clipboard is only there on HTTPS (or localhost); elsewhere a click on the key selects all of it.
                if (!navigator.clipboard) throw new Error('This page may not write to the clipboard (it is not served over HTTPS): click the key, which selects all of it, and copy it.');
                await navigator.clipboard.writeText(shown.apiKey);
                return 'Copied to the clipboard.';
              })}>Copy the key</button>
              <button type="button" onClick={() => setShown(undefined)}>I have copied it</button>
            </div>
            <Outcome action={copying} />
          </div>}
          <Table caption="API keys" rows={d.keys} rowKey={(k) => k.apiKeyId} columns={[
            { label: 'Key', cell: (k) => <><code>{k.prefix}…</code> <span class="name">{k.name ?? ''}</span></> },
            { label: 'Id', cell: (k) => <code>{k.apiKeyId}</code> },
            { label: 'State', cell: (k) => <><span data-key-state={k.apiKeyId} class={k.effectiveState === 'active' ? undefined : 'bad'}>{k.state}</span>{k.effectiveState === 'account_suspended' && <span class="bad" data-key-refused={k.apiKeyId}>, refused: the account is suspended</span>}</> },
            { label: 'Last used', cell: (k) => when(k.lastUsedAt) },
            { label: 'Limits', cell: (k) => limitsText(k.limits) },
            { label: 'Actions', cell: (k) => k.state === 'revoked' || k.state === 'expired' ? '' : <span class="actions">
              <button type="button" disabled={action.busy} aria-label={`Revoke key ${k.apiKeyId}`} onClick={() => actIfConfirmed(`Revoke the key ${k.prefix}…${k.name ? ` (${k.name})` : ''}? Every call with it is refused within a second, and this cannot be undone.`, async () => { await json(`${ADMIN}/api-keys/${k.apiKeyId}`, { method: 'DELETE' }); return `Key ${k.apiKeyId} revoked: refused within a second.`; })}>Revoke</button>
              <button type="button" disabled={action.busy} aria-label={`Rotate key ${k.apiKeyId}`} onClick={() => actIfConfirmed(`Rotate the key ${k.prefix}…${k.name ? ` (${k.name})` : ''}? A new key is made and shown once; this one is refused an hour from now.`, async () => {
                const key = await json<{ apiKeyId: string; apiKey: string }>(`${ADMIN}/api-keys/${k.apiKeyId}/rotate`, { method: 'POST', body: { graceSeconds: 3600 } });
                setShown(key); return `Key ${k.apiKeyId} rotated: it keeps working for an hour.`;
              })}>Rotate</button>
            </span> },
          ]} />
          <LimitsForm keys={d.keys} account={d.limits} onSave={async (target, limits) => {
            await json(target === 'account' ? `${ADMIN}/accounts/${accountId}` : `${ADMIN}/api-keys/${target}`, { method: 'PATCH', body: { limits } });
            detail.reload();
          }} />
        </Section>
        <MoneyForms accountId={accountId} onDone={() => detail.reload()} />
        <Section title="This account's audit log" id="account-audit">
          <ErrorBox error={audit.error} />
          <AuditTable items={audit.data?.items ?? []} empty={audit.data ? undefined : audit.loading ? 'Loading…' : ''} />
        </Section>
      </>}
    </>
  );
}

const limitsText = (limits: Limits) => LIMITS.filter((n) => limits[n] !== undefined).map((n) => `${limitLabel(n)}: ${n.startsWith('spend') ? usd(limits[n]!) : limits[n]}`).join('; ') || 'none';

/**
 * The limits of the account or of one of its keys. A field typed wrong refuses the whole save
 * (nothing is sent); a save, or choosing another target, empties the fields, so that what was
 * typed for one target is never sent for another.
 */
function LimitsForm({ keys, account, onSave }: { keys: Key[]; account: Limits; onSave: (target: string, limits: Partial<Record<LimitName, number | null>>) => Promise<void> }) {
  const [target, setTarget] = useState('account');
  const [values, setValues] = useState<Partial<Record<LimitName, string>>>({});
  const action = useAction();
  const current = target === 'account' ? account : keys.find((k) => k.apiKeyId === target)?.limits ?? {};
  const targetName = target === 'account' ? 'the account' : `key ${target}`;
  const save = () => action.run(async () => {
    const limits = parseLimits(values);
    await onSave(target, limits);
    setValues({});
    return `Limits of ${targetName} saved: in force within a second.`;
  });
  return (
    <form class="limits" onSubmit={(e) => { e.preventDefault(); void save(); }}>
      <h3>Limits</h3>
      <p class="muted">Current limits of {targetName}: {limitsText(current)}. Leave a field empty to keep it, type <code>none</code> to remove it; rates are whole numbers, spend in USD.</p>
      <Select label="Limits of" name="limits-target" value={target} onChange={(next) => { setTarget(next); setValues({}); }}
        options={[['account', 'the account'], ...keys.filter((k) => k.state !== 'revoked' && k.state !== 'expired').map((k): [string, string] => [k.apiKeyId, `key ${k.prefix}… ${k.name ?? ''}`])]} />
      {LIMITS.map((name) => <Field label={limitLabel(name)} name={name} value={values[name] ?? ''} onInput={(v) => setValues({ ...values, [name]: v })} />)}
      <button type="submit" disabled={action.busy}>Save the limits</button>
      <Outcome action={action} />
    </form>
  );
}

function MoneyForms({ accountId, onDone }: { accountId: string; onDone: () => void }) {
  const [kind, setKind] = useState<'credits' | 'debits'>('credits');
  const [form, setForm] = useState({ amount: '', reference: '', reason: '', pool: 'pool-3' });
  const action = useAction();
  const submit = () => action.run(async () => {
    const amount = parseUsd(form.amount);
    if (amount === undefined) throw new Error('Enter an amount in USD, such as 5 or 0.25.');
    const body = kind === 'credits' ? { amount, reference: form.reference, pool: form.pool } : { amount, reference: form.reference, reason: form.reason, pool: form.pool };
    const out = await json<{ applied: boolean; balance: number }>(`${ADMIN}/accounts/${accountId}/${kind}`, { method: 'POST', body });
    onDone();
    setForm({ ...form, amount: '', reference: '', reason: '' });
    return out.applied ? `${kind === 'credits' ? 'Credited' : 'Debited'} ${usd(amount)} (reference ${body.reference}); the balance is ${usd(out.balance)}.` : `The reference ${body.reference} was applied before: nothing moved.`;
  });
  return (
    <Section title="Credits and corrections" id="money">
      <form class="filters" onSubmit={(e) => { e.preventDefault(); void submit(); }}>
        <Select label="Operation" name="operation" value={kind} onChange={(v) => setKind(v as 'credits' | 'debits')} options={[['credits', 'Credit'], ['debits', 'Correction (debit)']]} />
        <Select label="Pool" name="pool" value={form.pool} onChange={(pool) => setForm({ ...form, pool })} options={[['pool-3', 'pool-3 (pay as you go)'], ['member', 'member']]} />
        <Field label="Amount (USD)" name="money-amount" value={form.amount} required onInput={(amount) => setForm({ ...form, amount })} />
        <Field label="Reference (applied once)" name="reference" value={form.reference} required onInput={(reference) => setForm({ ...form, reference })} />
        {kind === 'debits' && <Field label="Reason" name="reason" value={form.reason} required onInput={(reason) => setForm({ ...form, reason })} />}
        <button type="submit" disabled={action.busy}>{kind === 'credits' ? 'Credit' : 'Debit'}</button>
      </form>
      <Outcome action={action} />
    </Section>
  );
}

function ReconciliationView() {
  const result = useLoad(() => json<Reconciliation>(`${ADMIN}/reconciliation`), []);
  const repair = useAction();
  const r = result.data;
  return (
    <Section title="Reconciliation">
      <p class="muted">The ledger's balance of every account, recomputed from its bill rows, and the number of bills its FundsHold actor's events made there, against the actor's own balance and count (a lost release or platform-borne bill moves no balance: only the counts tell it). On Dapr an account that changed a moment ago may differ for that moment: run it again.</p>
      <div class="actions">
        <button type="button" onClick={result.reload} disabled={result.loading}>Reconcile again</button>
        <button type="button" disabled={!r || r.differences.length === 0 || repair.busy} onClick={() => repair.run(async () => { await json(`${ADMIN}/reconciliation/repair`, { method: 'POST', body: {} }); result.reload(); return 'Repair ran; reconciled again.'; })}>Repair</button>
      </div>
      <Outcome action={repair} />
      <ErrorBox error={result.error} />
      {r && <>
        <p id="reconciliation-summary" class={r.differences.length ? 'bad' : 'ok'}>{r.accounts} accounts compared: {r.differences.length === 0 ? 'no difference.' : `${r.differences.length} differ.`}</p>
        <Table caption="Differences" rows={r.differences} rowKey={(x) => `${x.accountId}:${x.pool}`} empty="" columns={[
          { label: 'Account', cell: (x) => <code>{x.accountId}</code> },
          { label: 'Pool', cell: (x) => x.pool },
          { label: 'Ledger', numeric: true, cell: (x) => <span class={x.ledger === x.actor ? undefined : 'bad'}>{usd(x.ledger)}</span> },
          { label: 'Actor', numeric: true, cell: (x) => <span class={x.ledger === x.actor ? undefined : 'bad'}>{usd(x.actor)}</span> },
          { label: 'Difference', numeric: true, cell: (x) => <span class={x.ledger === x.actor ? undefined : 'bad'}>{usd(x.actor - x.ledger)}</span> },
          { label: 'Bills (ledger / actor)', numeric: true, cell: (x) => (x.bills ? <span class={x.bills.ledger === x.bills.actor ? undefined : 'bad'} data-bills={`${x.bills.ledger}/${x.bills.actor}`}>{x.bills.ledger} / {x.bills.actor}</span> : <span class="muted" title="not counted for this account (its records predate the count)">—</span>) },
          { label: 'Missing events', cell: (x) => x.missing.map((m) => m.id).join(', ') || 'none (investigate)' },
        ]} />
      </>}
    </Section>
  );
}

function AuditTable({ items, empty = 'No action recorded.' }: { items: Audit[]; empty?: string }) {
  return <Table caption="Audit log" rows={items} rowKey={(a) => a.id} empty={empty} columns={[
    { label: 'When', cell: (a) => when(a.at) },
    { label: 'Action', cell: (a) => <code>{a.action}</code> },
    { label: 'Account', cell: (a) => <code>{a.accountId ?? ''}</code> },
    { label: 'Key', cell: (a) => <code>{a.apiKeyId ?? ''}</code> },
    { label: 'Details', cell: (a) => <code class="details">{JSON.stringify(a.details)}</code> },
    { label: 'Who', cell: (a) => a.who },
  ]} />;
}

const AUDIT_ACTION_OPTIONS: [string, string][] = [['', 'any action'], ...AUDIT_ACTIONS.map((name): [string, string] => [name, name])];

function AuditView() {
  const [form, setForm] = useState({ account: '', action: '', from: '', to: '' });
  const [filter, setFilter] = useState<{ accountId?: string; action?: string; from?: string; to?: string }>({});
  const [formError, setFormError] = useState<string>();
  const [before, setBefore] = useState<string[]>([]);
  const audit = useLoad(() => json<{ items: Audit[]; next: string | null }>(`${ADMIN}/audit${query({ limit: 20, ...filter, before: before.at(-1) })}`), [filter, before]);
  const apply = () => {
    try {
      // The days are UTC days, the last one included, as in the customer's Bills and Usage.
      const range = dayRange(form.from, form.to);
      setFormError(undefined);
      setBefore([]);
      setFilter({ accountId: form.account.trim() || undefined, action: form.action || undefined, ...range });
    } catch (error) {
      setFormError((error as Error).message);
    }
  };
  return (
    <Section title="Audit log">
      <form class="filters" onSubmit={(e) => { e.preventDefault(); apply(); }}>
        <Field label="Account id" name="audit-account" value={form.account} onInput={(account) => setForm({ ...form, account })} />
        <Select label="Action" name="audit-action" value={form.action} options={AUDIT_ACTION_OPTIONS} onChange={(action) => setForm({ ...form, action })} />
        <Field label="From (UTC day)" name="audit-from" type="date" value={form.from} onInput={(from) => setForm({ ...form, from })} />
        <Field label="To (UTC day, included)" name="audit-to" type="date" value={form.to} onInput={(to) => setForm({ ...form, to })} />
        <button type="submit">Filter</button>
      </form>
      <ErrorBox error={formError} />
      <p class="muted">A filtered page looks at up to 10,000 entries of the log: it may hold fewer than 20, and Older goes on from where it stopped.</p>
      <ErrorBox error={audit.error} />
      <AuditTable items={audit.data?.items ?? []} empty={audit.data ? undefined : audit.loading ? 'Loading…' : ''} />
      <nav class="pager" aria-label="Audit log pages">
        <button type="button" disabled={before.length === 0} onClick={() => setBefore(before.slice(0, -1))}>Newer</button>
        <button type="button" disabled={!audit.data?.next} onClick={() => setBefore([...before, audit.data!.next!])}>Older</button>
      </nav>
    </Section>
  );
}
