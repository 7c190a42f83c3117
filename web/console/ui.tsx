// Small building blocks shared by the views: loading state, errors, tables, paging, forms.

import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data?: T; error?: string; loading: boolean; reload: () => void;
  /** The last data loaded, whatever the question: what a pager counts while the next page loads, so it stays (and keeps the focus). */
  last?: T;
}

/**
 * Runs `load` when a dependency or `live` changes (or reload() is called). `deps` is the question
 * (a page, a filter, an account): the data is only ever the answer to the question asked now, so
 * while another page or filter loads, or when its load fails, there is no data (the last would be
 * the answer to another question, shown beside the new page number). `live` (the live poll's
 * version) only says the answer may have changed: its reload keeps the data meanwhile, and keeps
 * it when it fails (a poll's passing error).
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], live?: unknown): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean; deps?: unknown[]; last?: T }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true, error: sameDeps(s.deps, deps) ? s.error : undefined }));
    load().then(
      (data) => live && setState({ data, loading: false, deps, last: data }),
      (e: Error) => live && setState((s) => (sameDeps(s.deps, deps) ? { ...s, error: e.message, loading: false } : { error: e.message, loading: false, deps, last: s.last })),
    );
    return () => { live = false; };
  }, [...deps, live, tick]);
  const current = sameDeps(state.deps, deps);
  return { data: current ? state.data : undefined, last: state.last, error: state.error, loading: state.loading || !current, reload: () => setTick((t) => t + 1) };
}

const sameDeps = (a: unknown[] | undefined, b: unknown[]): boolean => a !== undefined && a.length === b.length && a.every((v, i) => Object.is(v, b[i]));

export function ErrorBox({ error }: { error?: string }) {
  return error ? <p class="error" role="alert">{error}</p> : null;
}

export function Section({ title, children, id }: { title: string; children: ComponentChildren; id?: string }) {
  return <section aria-labelledby={`${id ?? title}-h`} class="card"><h2 id={`${id ?? title}-h`}>{title}</h2>{children}</section>;
}

export interface Column<T> { label: string; cell: (row: T) => ComponentChildren; numeric?: boolean }

export function Table<T>({ caption, rows, columns, rowKey, empty = 'Nothing yet.' }: { caption: string; rows: T[]; columns: Column<T>[]; rowKey: (row: T) => string; empty?: string }) {
  if (rows.length === 0) return <p class="muted">{empty}</p>;
  return (
    // Focusable and named, so that a keyboard can scroll a table wider than the screen.
    <div class="scroll" tabIndex={0} role="region" aria-label={caption}>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead><tr>{columns.map((c) => <th scope="col" class={c.numeric ? 'num' : undefined}>{c.label}</th>)}</tr></thead>
        <tbody>{rows.map((row) => <tr key={rowKey(row)}>{columns.map((c) => <td class={c.numeric ? 'num' : undefined}>{c.cell(row)}</td>)}</tr>)}</tbody>
      </table>
    </div>
  );
}

export function Pager({ page, pages, onPage, label }: { page: number; pages: number; onPage: (page: number) => void; label: string }) {
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>Previous</button>
      <span aria-live="polite">Page {page} of {Math.max(pages, 1)}</span>
      <button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>Next</button>
    </nav>
  );
}

/** A labelled input: every control has its label. */
export function Field({ label, value, onInput, type = 'text', name, required, placeholder, autoComplete }: {
  label: string; value: string; onInput: (value: string) => void; type?: 'text' | 'password' | 'date'; name: string; required?: boolean; placeholder?: string; autoComplete?: string;
}) {
  return (
    <label class="field">
      <span>{label}</span>
      <input name={name} type={type as "text"} value={value} required={required} placeholder={placeholder} autoComplete={autoComplete}
        onInput={(e) => onInput((e.currentTarget as HTMLInputElement).value)} />
    </label>
  );
}

export function Select({ label, value, onChange, options, name }: { label: string; value: string; onChange: (value: string) => void; options: [string, string][]; name: string }) {
  return (
    <label class="field">
      <span>{label}</span>
      <select name={name} value={value} onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value)}>
        {options.map(([v, text]) => <option value={v}>{text}</option>)}
      </select>
    </label>
  );
}

/**
 * Runs an action from a button or form, showing its error or its outcome. One at a time: a run
 * asked for while another is under way (a double-click) is ignored, whatever the buttons show
 * yet, so that a key is never created, or rotated, twice with one of them never shown.
 */
export function useAction(): { busy: boolean; error?: string; done?: string; run: (action: () => Promise<string | void>) => Promise<void> } {
  const [state, setState] = useState<{ busy: boolean; error?: string; done?: string }>({ busy: false });
  const running = useRef(false);
  return {
    ...state,
    run: async (action) => {
      if (running.current) return;
      running.current = true;
      setState({ busy: true });
      try {
        const done = await action();
        setState({ busy: false, done: done || undefined });
      } catch (e) {
        setState({ busy: false, error: (e as Error).message });
      } finally {
        running.current = false;
      }
    },
  };
}

export function Outcome({ action }: { action: { error?: string; done?: string } }) {
  return <>{action.error ? <p class="error" role="alert">{action.error}</p> : null}{action.done ? <p class="ok" role="status">{action.done}</p> : null}</>;
}
