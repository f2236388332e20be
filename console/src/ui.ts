// Shared pieces: a loader with its loading, error and empty states; labelled fields; a confirmation that
// asks in the page (not a browser dialog); status badges; a scrollable table region reachable by keyboard.
import { html } from 'htm/preact';
import type { ComponentChildren, VNode } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './api.js';

export { html };

interface Loaded<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/** Loads on mount and whenever `deps` change; `reload` loads again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: string | null; loading: boolean }>({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (err) => live && setState({ data: null, error: messageOf(err), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: useCallback(() => setTick((n) => n + 1), []) };
}

/** Loading, error (with what to do) and empty states around a loaded value. */
export function View<T>(props: { loaded: Loaded<T>; what: string; empty?: (data: T) => boolean; emptyText?: string; children: (data: T) => ComponentChildren }): VNode {
  const { loaded, what } = props;
  if (loaded.loading && loaded.data === null) return html`<p class="state" role="status" aria-live="polite">Loading ${what}…</p>`;
  if (loaded.error !== null)
    return html`<div class="state error" role="alert">
      <p>Could not load ${what}: ${loaded.error}</p>
      <button type="button" onClick=${loaded.reload}>Try again</button>
    </div>`;
  if (loaded.data === null) return html`<p class="state" role="status">Loading ${what}…</p>`;
  if (props.empty?.(loaded.data)) return html`<p class="state empty">${props.emptyText ?? `No ${what} yet.`}</p>`;
  return html`${props.children(loaded.data)}`;
}

export function Notice(props: { kind: 'ok' | 'error'; text: string | null }): VNode | null {
  if (!props.text) return null;
  return html`<p class=${`notice ${props.kind}`} role=${props.kind === 'error' ? 'alert' : 'status'}>${props.text}</p>`;
}

export function Field(props: { label: string; id: string; hint?: string; children: ComponentChildren }): VNode {
  return html`<div class="field">
    <label for=${props.id}>${props.label}</label>
    ${props.children}
    ${props.hint ? html`<small id=${`${props.id}-hint`}>${props.hint}</small>` : null}
  </div>`;
}

/** A focusable, labelled table region; on a narrow screen each row stacks as a card labelled by column. */
export function TableRegion(props: { label: string; children: ComponentChildren }): VNode {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const names = [...(ref.current?.querySelectorAll('thead th') ?? [])].map((th) => th.textContent ?? '');
    for (const row of ref.current?.querySelectorAll('tbody tr') ?? []) {
      [...row.children].forEach((cell, i) => cell.setAttribute('data-label', names[i] ?? ''));
    }
  });
  return html`<div class="table-region" role="region" aria-label=${props.label} tabindex="0" ref=${ref}>${props.children}</div>`;
}

export function Badge(props: { tone: 'good' | 'bad' | 'warn' | 'neutral'; children: ComponentChildren }): VNode {
  return html`<span class=${`badge ${props.tone}`}>${props.children}</span>`;
}

/** A button that asks in place before it acts: "Disable demo? [Disable] [Cancel]". */
export function ConfirmButton(props: { label: string; question: string; confirm: string; danger?: boolean; onConfirm: () => Promise<void> | void }): VNode {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking) return html`<button type="button" onClick=${() => setAsking(true)}>${props.label}</button>`;
  return html`<span class="confirm" role="group" aria-label=${props.question}>
    <span>${props.question}</span>
    <button type="button" class=${props.danger ? 'danger' : 'primary'} disabled=${busy} ref=${(el: HTMLButtonElement | null) => el?.focus()}
      onClick=${async () => {
        setBusy(true);
        try {
          await props.onConfirm();
        } finally {
          setBusy(false);
          setAsking(false);
        }
      }}>${props.confirm}</button>
    <button type="button" onClick=${() => setAsking(false)}>Cancel</button>
  </span>`;
}

// The zone is part of every time shown: an operator and a bank's team may read the same page from two zones.
const DATE_TIME = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });

/** An instant in this browser's time zone, the zone named: "28 Nov 2026, 09:21 UTC". */
export const when = (iso: string | null | undefined): string => (iso ? DATE_TIME.format(new Date(iso)) : '—');

/** This browser's time zone, as a time input (datetime-local, which has none) is read in: "Europe/Lisbon". */
export const localZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone;
