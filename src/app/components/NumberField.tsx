// A number field that never loses what is typed: the text is a draft in the store until it reads as a
// whole number in range (then it is committed at once), an invalid draft stays on screen with its
// reason, ArrowUp/Down step by the value's valid step, and nothing runs while a draft is invalid.
import { useId, type KeyboardEvent } from 'react';
import { act, clearDraft, parseDraft, setDraft, stepValue, useApp, type NumberSpec } from '../store';

export interface NumberFieldProps {
  /** Draft id: "<scope>:<name>" (see store/drafts.ts). */
  id: string;
  label: string;
  value: number | undefined;
  spec: NumberSpec;
  /** ArrowUp/Down step (a multiple of it is the next value). */
  step?: number;
  hint?: string | undefined;
  onCommit(value: number): void;
  testId: string;
  /** Marked as the cause of a config problem (validation is shown in the problems list). */
  invalid?: boolean;
  disabled?: boolean;
  className?: string;
}

export function NumberField(props: NumberFieldProps) {
  const inputId = useId();
  const draft = useApp((s) => s.drafts[props.id]);
  const { value, spec, id, onCommit } = props;
  const shown = draft?.text ?? (value === undefined ? '' : String(value));

  const change = (text: string) => {
    const r = parseDraft(text, spec);
    if (r.ok) {
      if (r.value !== value) onCommit(r.value);
      if (text.trim() === String(r.value)) act(clearDraft, id);
      else act(setDraft, id, text, undefined);
    } else act(setDraft, id, text, r.problem);
  };

  const key = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key !== 'ArrowUp' && e.key !== 'ArrowDown') return;
    e.preventDefault();
    const typed = parseDraft(shown, spec);
    const from = typed.ok ? typed.value : (value ?? spec.min);
    const next = stepValue(from, props.step ?? 1, e.key === 'ArrowUp' ? 1 : -1, spec);
    act(clearDraft, id);
    if (next !== value) onCommit(next);
  };

  const problem = draft?.problem;
  return (
    <label className={`field ${props.className ?? ''}`} htmlFor={inputId} title={props.hint}>
      <span>{props.label}</span>
      <input
        id={inputId}
        type="text"
        inputMode="numeric"
        autoComplete="off"
        spellCheck={false}
        data-testid={props.testId}
        value={shown}
        disabled={props.disabled}
        aria-invalid={problem !== undefined || props.invalid ? true : undefined}
        onChange={(e) => change(e.target.value)}
        onKeyDown={key}
        onBlur={() => {
          if (draft && draft.problem === undefined) act(clearDraft, id);
        }}
      />
      {problem !== undefined && (
        <small className="field-problem" role="alert" data-testid={`${props.testId}-problem`}>
          {problem}
        </small>
      )}
    </label>
  );
}
