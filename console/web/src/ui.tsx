// Shared pieces of every page: the error box, the confirmation dialog, a loader hook.
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";

/** Problem shows what went wrong in words; pages render it instead of going blank. */
export function Problem({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const msg = error instanceof Error ? error.message : String(error);
  return (
    <div class="problem" role="alert">
      {title ? <strong>{title}: </strong> : null}
      {msg}
    </div>
  );
}

export function Note({ children }: { children: ComponentChildren }) {
  return <div class="note">{children}</div>;
}

/** useLoad runs load on mount and whenever deps change; reload runs it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(true);
  const run = useCallback(() => {
    setBusy(true);
    load().then(
      (d) => {
        setData(d);
        setError(undefined);
        setBusy(false);
      },
      (e) => {
        setError(e);
        setBusy(false);
      },
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(run, [run]);
  return { data, error, busy, reload: run };
}

export interface ConfirmRequest {
  title: string;
  /** What will happen, in sentences: the dialog is the console's only way to change state. */
  consequences: string[];
  action: string;
  danger?: boolean;
  run: () => Promise<unknown>;
  done?: (result: unknown) => void;
}

/**
 * Confirm is the dialog every state change goes through: it says what will happen, runs the
 * change only on the explicit button, and keeps the server's refusal on screen.
 */
export function Confirm({ req, close }: { req: ConfirmRequest | null; close: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    setBusy(false);
    setError(undefined);
  }, [req]);
  useEffect(() => {
    // Escape cancels, as the Cancel button does; it never confirms.
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && !busy && close();
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [busy, close]);
  if (!req) return null;
  const go = () => {
    setBusy(true);
    setError(undefined);
    req.run().then(
      (r) => {
        setBusy(false);
        close();
        req.done?.(r);
      },
      (e) => {
        setBusy(false);
        setError(e);
      },
    );
  };
  return (
    <div class="modal-back">
      <div class="modal" role="dialog" aria-modal="true" aria-label={req.title}>
        <h3>{req.title}</h3>
        <ul class="consequences">
          {req.consequences.map((c) => (
            <li>{c}</li>
          ))}
        </ul>
        <Problem error={error} title="Refused" />
        <div class="buttons">
          <button type="button" onClick={close} disabled={busy}>
            Cancel
          </button>
          <button type="button" class={req.danger ? "danger" : "primary"} onClick={go} disabled={busy} data-confirm>
            {busy ? "Working…" : req.action}
          </button>
        </div>
      </div>
    </div>
  );
}

export function Field(props: {
  label: string;
  value: string;
  onInput: (v: string) => void;
  name: string;
  placeholder?: string;
  type?: "text" | "password" | "datetime-local";
}) {
  return (
    <label class="field">
      <span>{props.label}</span>
      <input
        name={props.name}
        // preact narrows <input> props per type; every one of ours takes value and onInput.
        type={(props.type ?? "text") as "text"}
        value={props.value}
        placeholder={props.placeholder}
        // Seconds count in a reset or a search range; the default step (60 s) would refuse them.
        step={props.type === "datetime-local" ? 1 : undefined}
        onInput={(e) => props.onInput((e.target as HTMLInputElement).value)}
      />
    </label>
  );
}

export function Select(props: {
  label: string;
  name: string;
  value: string;
  options: readonly string[];
  onChange: (v: string) => void;
}) {
  return (
    <label class="field">
      <span>{props.label}</span>
      <select
        name={props.name}
        value={props.value}
        onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}
      >
        {props.options.map((o) => (
          <option value={o}>{o}</option>
        ))}
      </select>
    </label>
  );
}
