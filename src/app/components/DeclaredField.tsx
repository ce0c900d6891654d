// A family's declared control as a form field: a select for a choice, a draft-keeping number field for
// an integer (its step from the params). The playground's controls and the tuner's form both draw them.
import type { ControlDecl, FamilyParams, ParamValue } from '../../kernels/family';
import { NumberField } from './NumberField';

export interface DeclaredFieldProps {
  control: ControlDecl;
  /** The params the control's visibility and step are judged by. */
  params: FamilyParams;
  value: ParamValue | undefined;
  onCommit: (value: ParamValue) => void;
  /** The draft's id and the test id. */
  id: string;
  testId: string;
  /** Classes of a choice's label and of a number field. */
  choiceClass: string;
  numberClass?: string;
  invalid?: boolean;
  /** The number field's tooltip (default: the control's hint). */
  hint?: string;
}

export function DeclaredField(p: DeclaredFieldProps) {
  const { control, params, value } = p;
  if (control.visible && !control.visible(params)) return null;
  if (control.kind === 'choice')
    return (
      <label className={p.choiceClass} title={control.hint}>
        <span>{control.label}</span>
        <select
          data-testid={p.testId}
          value={typeof value === 'string' ? value : ''}
          aria-invalid={p.invalid || undefined}
          onChange={(e) => p.onCommit(e.target.value)}
        >
          {control.options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      </label>
    );
  return (
    <NumberField
      id={p.id}
      label={control.label}
      value={typeof value === 'number' ? value : undefined}
      spec={{ label: control.label, min: control.min, max: control.max }}
      step={control.step(params)}
      {...((p.hint ?? control.hint) ? { hint: p.hint ?? control.hint } : {})}
      onCommit={p.onCommit}
      testId={p.testId}
      {...(p.numberClass ? { className: p.numberClass } : {})}
      {...(p.invalid !== undefined ? { invalid: p.invalid } : {})}
    />
  );
}
