// The clicked element: its owner (recorded and analytic), the GPU value against the quantized oracle
// and the full-precision reference, the bit patterns when the gate is bit-exact, and its k-block
// drill-down (KBlockDrillDown).
import { Fragment, lazy, Suspense, useEffect, useMemo, useRef } from 'react';
import type { OwnershipPhase } from '../../kernels/family';
import type { OwnershipBuffers } from '../../workers/protocol';
import { act, selectElement, useApp } from '../store';
import { fmt } from './analysis';
import type { RunAnalysis } from './useRunAnalysis';

// The k-block drill-down loads with the first element clicked: the first paint has none selected.
const KBlockDrillDown = lazy(() => import('./KBlockDrillDown').then((m) => ({ default: m.KBlockDrillDown })));

const hex = (arr: Float32Array | Int32Array, i: number) =>
  (new Uint32Array(arr.buffer, arr.byteOffset, arr.length)[i] ?? 0).toString(16).padStart(8, '0');

function ownerText(m: OwnershipBuffers, i: number): string {
  if (m.count[i] === 0) return 'never stored';
  return `workgroup ${m.workgroup[i]}, plane ${m.plane[i]}, lane ${m.lane[i]}${m.count[i]! > 1 ? ` (stored ${m.count[i]}×)` : ''}`;
}

export function ElementInspector({ analysis }: { analysis: RunAnalysis }) {
  const selected = useApp((s) => s.selected);
  const box = useRef<HTMLDivElement>(null);
  // A click on a cell selects it: bring the inspector (below the canvas) into view.
  useEffect(() => {
    if (selected !== undefined) box.current?.scrollIntoView({ block: 'nearest' });
  }, [selected]);
  const o = analysis.outcome;
  const refMax = useMemo(() => {
    let m = 0;
    for (const v of o.oracle) m = Math.max(m, Math.abs(v));
    return m;
  }, [o.oracle]);
  if (selected === undefined || selected >= o.rows * o.cols) {
    return <p className="muted small">Click an element to see its owner and its value against the oracle.</p>;
  }
  const row = Math.floor(selected / o.cols);
  const col = selected % o.cols;
  const gpu = o.output[selected]!;
  const ref = o.oracle[selected]!;
  const fp = o.fullPrecision?.[selected];
  const analytic = Object.entries(o.analyticOwnership ?? {}) as [OwnershipPhase, OwnershipBuffers][];
  return (
    <div ref={box} className={`inspector ${analysis.bad[selected] ? 'is-bad' : ''}`} data-testid="inspector">
      <header>
        <strong>
          element ({row}, {col})
        </strong>{' '}
        <span className="muted">index {selected}</span>
        <button type="button" className="link" onClick={() => act(selectElement, undefined)}>
          clear
        </button>
      </header>
      <dl>
        {o.ownership && (
          <>
            <dt>owner (recorded)</dt>
            <dd data-testid="inspector-owner">{ownerText(o.ownership, selected)}</dd>
          </>
        )}
        {analytic
          .filter(([p]) => !analysis.opaque.includes(p))
          .map(([p, m]) => (
            <Fragment key={p}>
              <dt>owner ({p})</dt>
              <dd>{ownerText(m, selected)}</dd>
            </Fragment>
          ))}
        <dt>GPU</dt>
        <dd data-testid="inspector-gpu">
          {gpu} {o.verdict.gate.kind === 'bit-exact' && <code>0x{hex(o.output, selected)}</code>}
        </dd>
        <dt>oracle (quantized)</dt>
        <dd data-testid="inspector-oracle">
          {ref} {o.verdict.gate.kind === 'bit-exact' && <code>0x{hex(o.oracle, selected)}</code>}
        </dd>
        {fp !== undefined && (
          <>
            <dt>f32 reference</dt>
            <dd>{fp}</dd>
          </>
        )}
        <dt>|GPU − oracle| / max|oracle|</dt>
        <dd className={analysis.bad[selected] ? 'bad' : 'good'}>
          {fmt(analysis.kernelError[selected])} {analysis.bad[selected] ? '(fails the gate)' : ''}
        </dd>
        {analysis.quantError && (
          <>
            <dt>|oracle − f32| / max|f32|</dt>
            <dd>{fmt(analysis.quantError[selected])}</dd>
          </>
        )}
      </dl>
      <Suspense fallback={<p className="muted">loading the k-block drill-down…</p>}>
        <KBlockDrillDown key={`${selected}`} outcome={o} index={selected} refMax={refMax} />
      </Suspense>
    </div>
  );
}
