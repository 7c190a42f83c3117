// The customer's view, signed in with an API key (or an OAuth member token): balance, spending,
// bills and usage with their exports, image tasks, orders and limits. Everything comes from the
// gateway's console, order and image routes, as the API key's own account.

import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, download, json, newIdempotencyKey, onCredentialRefused, query, request, sessionValue, setSessionValue } from './api';
import { SpendingChart } from './chart';
import { dayRange, lastDays, parseUsd, spendingOf, usd, when, type LimitName } from './format';
import { ErrorBox, Field, Outcome, Pager, Section, Table, useAction, useLoad } from './ui';

interface Balance { accountId: string; pool: string; balance: number; held: number; available: number; leased: number; openHolds: number }
interface Page<T> { items: T[]; page: number; size: number; total: number; through: number }

/**
 * The `through` a list's page is read with: page 1 shows the newest rows; a later page keeps the
 * list as the page before it found it (the server's `through`), so that paging while charges
 * arrive neither repeats nor skips a row.
 */
function throughFor(nextPage: number, current: number | undefined, last: { through: number } | undefined): number | undefined {
  return nextPage > 1 ? current ?? last?.through : undefined;
}
export interface BillItem { id: string; occurredAt: string; kind: string; amount: number; balanceDelta: number; holdId?: string; requestId?: string; taskId?: string; model?: string; reference?: string }
/** How often the Limits view reads the minute's rate counts again. */
const RATE_REFRESH_MS = 2000;

/** What the current minute has counted under a rate limit (GET …/limits). */
interface RateUsage { window_start: string; reset_at: string; account: { requests: number; tokens: number }; key: { requests: number; tokens: number } | null }
export interface UsageItem { id: string; occurredAt: string; unit: string; quantity: number; unitPrice: number; cost: number; charged: number; platformBorne: boolean; holdId?: string; requestId?: string; taskId?: string; model?: string }
type Kind = 'bills' | 'usage';

const BASE = '/api/distribution/api-credit';
const PAGE_SIZE = 20;
/** How often the view asks whether anything changed (a new bill row or another balance). */
export const LIVE_MS = 2000;

/** `at`: the page and filters of the Bills or Usage list, from the address (`#bills/page=2&model=…`). */
export function CustomerView({ tab, at }: { tab: string; at?: string }) {
  // Live: the balance and the newest bill, polled; every list below reloads when either changes.
  const [version, setVersion] = useState('');
  const [balance, setBalance] = useState<Balance>();
  const [error, setError] = useState<string>();
  // The credential refused (revoked, expired): polling stops and no figure is shown, all of them stale.
  const [refused, setRefused] = useState(false);
  useEffect(() => {
    let live = true;
    // Refused on any request (this poll's or a view's): stop at once, before the next poll.
    const refuse = (e: ApiError) => {
      if (!live) return;
      live = false;
      clearInterval(timer);
      setRefused(true);
      setError(`${e.message} Sign out, then sign in with a key that works.`);
    };
    const stopListening = onCredentialRefused(refuse);
    // Polls that succeeded after one failed: a view whose own load failed meanwhile (a suspension,
    // the gateway unreachable) shows that error until it loads again, so each recovery is a new
    // version, and every view reloads with it.
    let failing = false;
    let recoveries = 0;
    const poll = async () => {
      try {
        const [b, newest] = await Promise.all([json<Balance>(`${BASE}/balance`), json<Page<BillItem>>(`${BASE}/bills/page?page=1&size=1`)]);
        if (!live) return;
        if (failing) recoveries += 1;
        failing = false;
        setBalance(b);
        setError(undefined);
        setVersion(`${newest.total}:${b.balance}:${b.held}:${recoveries}`);
      } catch (e) {
        if (!live) return;
        if (e instanceof ApiError && e.status === 401) return refuse(e);
        failing = true;
        setError((e as Error).message);
      }
    };
    const timer = setInterval(poll, LIVE_MS);
    void poll();
    return () => { live = false; clearInterval(timer); stopListening(); };
  }, []);

  if (refused) return <ErrorBox error={error} />;
  return (
    <>
      <ErrorBox error={error} />
      {tab === 'overview' && <Overview balance={balance} version={version} />}
      {tab === 'bills' && <Ledger kind="bills" version={version} at={at} />}
      {tab === 'usage' && <Ledger kind="usage" version={version} at={at} />}
      {tab === 'images' && <Images version={version} />}
      {tab === 'orders' && <Orders version={version} />}
      {tab === 'limits' && <LimitsView version={version} />}
    </>
  );
}

function Money({ nano, id }: { nano: number | undefined; id: string }) {
  return <span id={id} data-nano={nano ?? ''}>{nano === undefined ? '…' : usd(nano)}</span>;
}

function Overview({ balance, version }: { balance?: Balance; version: string }) {
  // The 30 UTC days that end today, as today is at each render (the live poll renders every 2 s):
  // a page left open past midnight UTC moves on to the new day, whose charges it would never show.
  const { since, until } = lastDays(30, Date.now());
  // The ledger's sums per day and model (never the rows themselves).
  const usage = useLoad(() => json<{ items: { day: string; model: string; charged: number }[] }>(`${BASE}/spending${query({ from: since, to: until })}`), [since, until], version);
  const spending = useMemo(() => spendingOf((usage.data?.items ?? []).map((item) => ({ occurredAt: item.day, model: item.model, charged: item.charged })), since, until), [usage.data, since, until]);
  const charged = spending.charged.flat().some((n) => n > 0);
  return (
    <>
      <Section title="Balance">
        <dl class="stats">
          <div><dt>Balance</dt><dd><Money id="balance" nano={balance?.balance} /></dd></div>
          <div><dt>Held by calls in flight</dt><dd><Money id="held" nano={balance?.held} /></dd></div>
          <div><dt>Locked by funds leases</dt><dd><Money id="leased" nano={balance?.leased} /></dd></div>
          <div><dt>Available</dt><dd><Money id="available" nano={balance?.available} /></dd></div>
        </dl>
        <p class="muted">Pool <code>{balance?.pool ?? '…'}</code> of account <code>{balance?.accountId ?? '…'}</code>. Held funds are reserved by calls still running; they are charged or returned when the call ends. Funds leases are amounts a gateway instance has set aside to serve your calls quickly; what they do not spend returns to you. Available = balance − held − leased.</p>
      </Section>
      <Section title="Spending over time">
        <ErrorBox error={usage.error} />
        {charged ? <SpendingChart spending={spending} /> : <p class="muted">{usage.data ? 'No spending in the last 30 days.' : usage.loading ? 'Loading…' : ''}</p>}
        <Table caption="Charged by model" rowKey={(m) => m} rows={spending.models} columns={[
          { label: 'Model', cell: (m) => m },
          { label: 'Charged, last 30 days', numeric: true, cell: (m) => usd(spending.charged[spending.models.indexOf(m)]!.reduce((a, b) => a + b, 0)) },
        ]} empty="" />
      </Section>
    </>
  );
}

interface Filters { from: string; to: string; model: string }
const NO_FILTER: Filters = { from: '', to: '', model: '' };

/**
 * A list's page and filters as the address keeps them (`page=2&from=2026-11-01&model=…`, each
 * left out when it is the default), so that a reload, Back and Forward and a link keep them. A
 * page or day that is not one (typed by hand) is the list's first page, unfiltered.
 */
function listAt(at: string | undefined): { page: number; through?: number; filters: Filters } {
  const q = new URLSearchParams(at ?? '');
  const page = /^[1-9][0-9]{0,8}$/.test(q.get('page') ?? '') ? Number(q.get('page')) : 1;
  const through = page > 1 && /^[0-9]{1,15}$/.test(q.get('through') ?? '') ? Number(q.get('through')) : undefined;
  const filters = { from: q.get('from') ?? '', to: q.get('to') ?? '', model: q.get('model') ?? '' };
  try {
    dayRange(filters.from, filters.to);
  } catch {
    return { page: 1, filters: NO_FILTER };
  }
  return through === undefined ? { page, filters } : { page, through, filters };
}

function listHash(kind: Kind, page: number, filters: Filters, through?: number): string {
  const q = new URLSearchParams();
  if (page > 1) q.set('page', String(page));
  if (page > 1 && through !== undefined) q.set('through', String(through));
  for (const name of ['from', 'to', 'model'] as const) if (filters[name] !== '') q.set(name, filters[name]);
  const s = q.toString();
  return s ? `${kind}/${s}` : kind;
}

/** Bills or usage: the page route, filtered by the ledger (date and model), and its exports with the same filters. */
function Ledger({ kind, version, at }: { kind: Kind; version: string; at?: string }) {
  const { page, through, filters } = useMemo(() => listAt(at), [at]);
  // Each page or filter asked for is an entry of the browser's history.
  const show = (nextPage: number, nextFilters: Filters, nextThrough?: number) => { location.hash = listHash(kind, nextPage, nextFilters, nextThrough); };
  const setPage = (nextPage: number) => show(nextPage, filters, throughFor(nextPage, through, rows.last));
  const [form, setForm] = useState<Filters>(filters);
  // Back, Forward or a link: the form shows the filters of the list shown.
  useEffect(() => setForm(filters), [filters]);
  // A day the form cannot send is said beside it; the filters applied stay those last sent.
  const [formError, setFormError] = useState<string>();
  const filtered = filters.from !== '' || filters.to !== '' || filters.model !== '';
  const range = { ...dayRange(filters.from, filters.to), model: filters.model };
  const apply = () => {
    try {
      dayRange(form.from, form.to);
    } catch (e) {
      setFormError(`Not filtered. ${(e as Error).message}`);
      return;
    }
    setFormError(undefined);
    // A model pasted with a space around it (copied from a table) is the model: ids have none.
    show(1, { ...form, model: form.model.trim() });
  };
  const rows = useLoad(() => json<Page<BillItem | UsageItem>>(`${BASE}/${kind}/page${query({ page, size: PAGE_SIZE, through, ...range })}`), [kind, page, through, filters], version);
  const exporting = useAction();
  const title = kind === 'bills' ? 'Bills' : 'Usage';
  // A refusal of the export comes back after the click's action has ended (the file is saved by the browser, not the page).
  const [refused, setRefused] = useState<string>();
  const save = (format: 'csv' | 'jsonl') => exporting.run(async () => {
    setRefused(undefined);
    download(`${BASE}/${kind}/export`, { format, ...range }, (error) => setRefused(error.message));
    return `Exporting ${kind}.${format}: your browser saves the file as it arrives (see its downloads).`;
  });
  const data = rows.data;
  return (
    <Section title={title}>
      <form class="filters" onSubmit={(e) => { e.preventDefault(); apply(); }}>
        <Field label="From (UTC day)" name="from" type="date" value={form.from} onInput={(from) => setForm({ ...form, from })} />
        <Field label="To (UTC day, included)" name="to" type="date" value={form.to} onInput={(to) => setForm({ ...form, to })} />
        <Field label="Model" name="model" value={form.model} placeholder="any model" onInput={(model) => setForm({ ...form, model })} />
        <button type="submit">Filter</button>
      </form>
      <ErrorBox error={formError} />
      <div class="actions">
        <button type="button" onClick={() => save('csv')} disabled={exporting.busy}>Export CSV</button>
        <button type="button" onClick={() => save('jsonl')} disabled={exporting.busy}>Export JSON Lines</button>
        <span class="muted">Exports take the filters of the table.</span>
      </div>
      {refused ? <ErrorBox error={refused} /> : <Outcome action={exporting} />}
      <ErrorBox error={rows.error} />
      {!data && rows.loading && <p class="muted" role="status">Loading…</p>}
      {data && <>
        <p class="muted" id={`${kind}-total`} data-total={data.total}>{data.total} {kind === 'bills' ? 'bill items' : 'usage lines'}{filtered ? ' match' : ''}, newest first.</p>
        {kind === 'bills'
          ? <Table caption={title} rows={data.items as BillItem[]} rowKey={(r) => r.id} columns={BILL_COLUMNS} />
          : <Table caption={title} rows={data.items as UsageItem[]} rowKey={(r) => r.id} columns={USAGE_COLUMNS} />}
      </>}
      {rows.last && <Pager label={title} page={page} pages={Math.ceil(rows.last.total / PAGE_SIZE)} onPage={setPage} />}
    </Section>
  );
}

const BILL_COLUMNS = [
  { label: 'When', cell: (r: BillItem) => when(r.occurredAt) },
  { label: 'Kind', cell: (r: BillItem) => <span class={`kind kind-${r.kind}`}>{r.kind}</span> },
  { label: 'Model', cell: (r: BillItem) => r.model ?? '' },
  { label: 'Amount', numeric: true, cell: (r: BillItem) => usd(r.amount) },
  { label: 'Balance change', numeric: true, cell: (r: BillItem) => <span data-nano={r.balanceDelta}>{usd(r.balanceDelta)}</span> },
  { label: 'Reference or request', cell: (r: BillItem) => <code>{r.reference ?? r.requestId ?? r.taskId ?? ''}</code> },
];
const USAGE_COLUMNS = [
  { label: 'When', cell: (r: UsageItem) => when(r.occurredAt) },
  { label: 'Model', cell: (r: UsageItem) => r.model ?? '' },
  { label: 'Unit', cell: (r: UsageItem) => r.unit },
  { label: 'Quantity', numeric: true, cell: (r: UsageItem) => r.quantity },
  { label: 'Cost', numeric: true, cell: (r: UsageItem) => usd(r.cost) },
  { label: 'Charged', numeric: true, cell: (r: UsageItem) => `${usd(r.charged)}${r.platformBorne ? ' (borne by the platform)' : ''}` },
  { label: 'Request', cell: (r: UsageItem) => <code>{r.requestId ?? r.taskId ?? ''}</code> },
];

const TASK_STATES: [string, string][] = [
  ['succeeded', 'The image was made and charged. It can be fetched again with the same key.'],
  ['failed', 'The provider refused the request; the money held for it was returned.'],
  ['unresolved', 'We do not know yet whether the provider made the image. The price stays held until we find out; asking again moves it on.'],
  ['unknown', 'The provider never told us within 24 hours. Nothing was charged and the hold was returned; if the image turns up later, it is yours at no charge.'],
];

/** The recovery route's refusals, as task states. */
const TASK_ERRORS: Record<string, string> = { provider_rejected: 'failed', image_unresolved: 'unresolved', image_unknown: 'unknown', not_found: 'not_found' };

interface TaskRow { id: string; taskId: string; model: string; occurredAt: string; charged: number; outcome: string }

function Images({ version }: { version: string }) {
  // The bills of image tasks, a page at a time: each is a task's charge, or its hold returned.
  const [{ page, through }, setAt] = useState<{ page: number; through?: number }>({ page: 1 });
  const bills = useLoad(() => json<Page<BillItem>>(`${BASE}/bills/page${query({ page, size: PAGE_SIZE, images: 'true', through })}`), [page, through], version);
  const setPage = (next: number) => setAt({ page: next, through: throughFor(next, through, bills.last) });
  const tasks: TaskRow[] = (bills.data?.items ?? []).map((bill) => ({
    id: bill.id, taskId: bill.taskId!, model: bill.model ?? '', occurredAt: bill.occurredAt,
    charged: bill.kind === 'charge' ? bill.amount : 0,
    outcome: bill.kind === 'release' ? `released (${bill.reference ?? ''})` : bill.kind,
  }));
  const [states, setStates] = useState<Record<string, string>>({});
  const [lookup, setLookup] = useState({ model: '', taskId: '' });
  const check = async (model: string, taskId: string) => {
    let state: string;
    try {
      await request(`/api/open/v1/models/${encodeURIComponent(model)}/images/tasks/${encodeURIComponent(taskId)}`);
      state = 'succeeded';
    } catch (e) {
      state = e instanceof ApiError ? TASK_ERRORS[e.code] ?? e.message : (e as Error).message;
    }
    setStates((s) => ({ ...s, [taskId]: state }));
  };
  const explain = (state: string | undefined) => TASK_STATES.find(([name]) => name === state)?.[1] ?? (state === 'not_found' ? 'No such task for this key and model.' : state ?? '');
  return (
    <>
      <Section title="Image tasks">
        <ErrorBox error={bills.error} />
        <Table caption="Image tasks" rows={tasks} rowKey={(t) => t.id} empty={bills.data ? 'No image task has been settled yet.' : bills.loading ? 'Loading…' : ''} columns={[
          { label: 'When', cell: (t) => when(t.occurredAt) },
          { label: 'Model', cell: (t) => t.model },
          { label: 'Task', cell: (t) => <code>{t.taskId}</code> },
          { label: 'Money', cell: (t) => t.outcome },
          { label: 'Charged', numeric: true, cell: (t) => usd(t.charged) },
          // A state is as it was when asked: it can be asked again (an unresolved task moves on when asked).
          { label: 'State now', cell: (t) => <>
            {states[t.taskId] && <><span data-task-state={t.taskId}><strong>{states[t.taskId]}</strong>: {explain(states[t.taskId])}</span> </>}
            <button type="button" onClick={() => check(t.model, t.taskId)} aria-label={`${states[t.taskId] ? 'Check again' : 'Check'} the state of task ${t.taskId}`}>{states[t.taskId] ? 'Check again' : 'Check'}</button>
          </> },
        ]} />
        {bills.last && bills.last.total > PAGE_SIZE && <Pager label="Image tasks" page={page} pages={Math.ceil(bills.last.total / PAGE_SIZE)} onPage={setPage} />}
        <form class="filters" onSubmit={(e) => { e.preventDefault(); void check(lookup.model, lookup.taskId); }}>
          <Field label="Model" name="task-model" value={lookup.model} required onInput={(model) => setLookup({ ...lookup, model })} />
          <Field label="Task id" name="task-id" value={lookup.taskId} required onInput={(taskId) => setLookup({ ...lookup, taskId })} />
          <button type="submit">Look up a task</button>
        </form>
        {lookup.taskId && states[lookup.taskId] && <p role="status">Task <code>{lookup.taskId}</code>: <strong>{states[lookup.taskId]}</strong>. {explain(states[lookup.taskId])}</p>}
      </Section>
      <Section title="What the states mean">
        <dl class="legend">{TASK_STATES.map(([name, text]) => <><dt>{name}</dt><dd>{text}</dd></>)}</dl>
      </Section>
    </>
  );
}

/** A paid order's credit is referenced `order:<orderId>`. */
const ORDER_REFERENCE = 'order:';

interface Order { orderId: string; amount: number; status: string; createdAt: string; fulfilledAt?: string; payments: { note?: string }[] }

function Orders({ version }: { version: string }) {
  const [amount, setAmount] = useState('');
  // The orders of this session, kept across views and reloads of this tab (there is no route listing an account's orders).
  const [mine, setMineState] = useState<Order[]>(() => sessionValue<Order[]>('orders') ?? []);
  const setMine = (next: (list: Order[]) => Order[]) => setMineState((list) => {
    const value = next(list);
    setSessionValue('orders', value);
    return value;
  });
  const [lookup, setLookup] = useState('');
  const action = useAction();
  // The account's credits, a page at a time: a paid order's is referenced `order:<orderId>`, an operator's by its own reference.
  const [{ page: creditPage, through: creditsThrough }, setCreditsAt] = useState<{ page: number; through?: number }>({ page: 1 });
  const credits = useLoad(() => json<Page<BillItem>>(`${BASE}/bills/page${query({ page: creditPage, size: PAGE_SIZE, kind: 'credit', through: creditsThrough })}`), [creditPage, creditsThrough], version);
  const setCreditPage = (next: number) => setCreditsAt({ page: next, through: throughFor(next, creditsThrough, credits.last) });
  const remember = (order: Order) => setMine((list) => [order, ...list.filter((o) => o.orderId !== order.orderId)]);
  // One Idempotency-Key per top-up asked for, kept until an order is made: asked again after an
  // error answer or none (the order may have been made all the same), the same amount gets the
  // same order, not a second one. Another amount is another top-up, with a key of its own.
  const attempt = useRef<{ nano: number; key: string } | undefined>(undefined);
  const start = () => action.run(async () => {
    const nano = parseUsd(amount);
    if (nano === undefined) throw new Error('Enter an amount in USD, such as 20 or 12.50.');
    if (attempt.current?.nano !== nano) attempt.current = { nano, key: newIdempotencyKey() };
    const order = await json<Order>('/api/consumer/orders', { method: 'POST', body: { amount: nano }, headers: { 'idempotency-key': attempt.current.key } });
    attempt.current = undefined;
    remember(order);
    setAmount('');
    return `Order ${order.orderId} for ${usd(order.amount)} is ${order.status}: your balance grows once the payment provider confirms the payment.`;
  });
  const find = () => action.run(async () => { remember(await json<Order>(`/api/consumer/orders/${encodeURIComponent(lookup.trim())}`)); });
  const refresh = () => action.run(async () => { for (const o of mine) remember(await json<Order>(`/api/consumer/orders/${o.orderId}`)); });
  return (
    <>
      <Section title="Top up">
        <form class="filters" onSubmit={(e) => { e.preventDefault(); void start(); }}>
          <Field label="Amount (USD)" name="amount" value={amount} required placeholder="20.00" onInput={setAmount} />
          <button type="submit" disabled={action.busy}>Start a top-up</button>
        </form>
        <form class="filters" onSubmit={(e) => { e.preventDefault(); void find(); }}>
          <Field label="Order id" name="order-id" value={lookup} required placeholder="ord_…" onInput={setLookup} />
          <button type="submit" disabled={action.busy}>Look up an order</button>
        </form>
        <Outcome action={action} />
      </Section>
      <Section title="Orders">
        <Table caption="Orders of this session" rows={mine} rowKey={(o) => o.orderId} empty="No order started or looked up in this session." columns={[
          { label: 'Order', cell: (o) => <code>{o.orderId}</code> },
          { label: 'Created', cell: (o) => when(o.createdAt) },
          { label: 'Amount', numeric: true, cell: (o) => usd(o.amount) },
          { label: 'Status', cell: (o) => o.status },
          { label: 'Latest payment note', cell: (o) => o.payments.at(-1)?.note ?? '' },
        ]} />
        {mine.length > 0 && <button type="button" onClick={refresh} disabled={action.busy}>Refresh these orders</button>}
        <h3>Credits</h3>
        <p class="muted">Every credit to this balance, newest first: a paid order shows its order id; a credit from the operator, its reference.</p>
        <ErrorBox error={credits.error} />
        <Table caption="Credits" rows={credits.data?.items ?? []} rowKey={(b) => b.id} empty={credits.data ? 'Nothing has been credited yet.' : credits.loading ? 'Loading…' : ''} columns={[
          { label: 'Credited', cell: (b) => when(b.occurredAt) },
          { label: 'Order or reference', cell: (b) => b.reference?.startsWith(ORDER_REFERENCE) ? <>order <code>{b.reference.slice(ORDER_REFERENCE.length)}</code></> : <code>{b.reference ?? ''}</code> },
          { label: 'Amount', numeric: true, cell: (b) => usd(b.amount) },
        ]} />
        {credits.last && credits.last.total > PAGE_SIZE && <Pager label="Credits" page={creditPage} pages={Math.ceil(credits.last.total / PAGE_SIZE)} onPage={setCreditPage} />}
      </Section>
    </>
  );
}

type Limits = Partial<Record<LimitName, number>>;
/** What a scope has spent and holds, as its spend limits count it (GET …/limits, spend_usage). */
interface SpendFigures { spend_per_day: number; spend_per_month: number; spend_total: number; held: number }
interface CallerLimits { key: Limits | null; account: Limits; rate_usage: RateUsage | null; spend_usage: { account: SpendFigures & { leased: number }; key: SpendFigures | null } }

function LimitsView({ version }: { version: string }) {
  const limits = useLoad(() => json<CallerLimits>(`${BASE}/limits`), [], version);
  // The minute's counts move with every call and reset each minute: read again every few seconds while shown.
  useEffect(() => {
    const timer = setInterval(() => limits.reload(), RATE_REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  const names: [LimitName, string, boolean][] = [
    ['requests_per_minute', 'Requests per minute', false],
    ['tokens_per_minute', 'Tokens per minute', false],
    ['spend_per_day', 'Spend per UTC day', true],
    ['spend_per_month', 'Spend per UTC month', true],
    ['spend_total', 'Spend in total', true],
  ];
  const d = limits.data;
  const show = (value: number | undefined, money: boolean) => (value === undefined ? '—' : money ? usd(value) : value.toLocaleString('en-US'));
  // Rates: what the current minute has counted (only counted under a rate limit).
  const minute = (counts: { requests: number; tokens: number } | null | undefined, name: LimitName) => (name === 'requests_per_minute' ? counts?.requests : name === 'tokens_per_minute' ? counts?.tokens : undefined);
  // Spend: what was charged in the limit's period plus what is held open now, as the limit counts it.
  const spent = (figures: SpendFigures | null | undefined, name: LimitName) => (figures && name.startsWith('spend') ? figures[name as keyof SpendFigures] + figures.held : undefined);
  const used = (scope: 'key' | 'account', name: LimitName, money: boolean) => (money ? spent(d?.spend_usage[scope], name) : minute(d?.rate_usage?.[scope], name));
  return (
    <Section title="Limits">
      <ErrorBox error={limits.error} />
      {d && <Table caption="Limits" rowKey={(n) => n[0]} rows={names} columns={[
        { label: 'Limit', cell: ([, label]) => label },
        { label: 'This key', numeric: true, cell: ([name, , money]) => <span data-limit={`key-${name}`}>{show(d.key?.[name], money)}</span> },
        { label: 'The account', numeric: true, cell: ([name, , money]) => <span data-limit={`account-${name}`}>{show(d.account[name], money)}</span> },
        { label: 'Used by this key', numeric: true, cell: ([name, , money]) => <span data-key-used={name}>{show(used('key', name, money), money)}</span> },
        { label: 'Used by the account', numeric: true, cell: ([name, , money]) => <span data-used={name}>{show(used('account', name, money), money)}</span> },
      ]} />}
      {d?.rate_usage && <p class="muted">Rates used in the minute that began at {new Date(d.rate_usage.window_start).toISOString().slice(11, 16)} UTC; it resets at {new Date(d.rate_usage.reset_at).toISOString().slice(11, 16)} UTC.</p>}
      <p class="muted">A dash: no such limit. Spend counts what was charged in the period plus what calls in flight hold and funds leases lock (now {usd(d?.spend_usage.account.held ?? 0)} for the account, of it {usd(d?.spend_usage.account.leased ?? 0)} locked by leases until they are returned, a few seconds after the last call); a call that would pass a spend limit is refused (402 spend_limit_exceeded), a call over a rate gets 429 with Retry-After. Rates are counted per whole minute (tokens as corrected once calls settle); every answer of a call under a rate limit also tells what remains in its x-ratelimit headers.</p>
    </Section>
  );
}
