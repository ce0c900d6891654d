// The error drill-down under the element inspector: the clicked element's k-blocks (what each adds, the
// oracle's running sum against the GPU value), the block where the GPU value first departs, and the
// quantized activation and weight blocks (codes and scales) that feed a chosen k-block. The partials are
// the family's oracle's (the worker computes them); no kernel exposes its own partial sums yet.
import { useEffect, useState } from 'react';
import {
  deviationText,
  gateTolerance,
  locateDeviation,
  type Deviation,
  type ElementPartials,
  type OperandBlock,
} from '../../kernels/partials';
import type { RunOutcome } from '../../workers/protocol';
import { useServices } from '../appContext';
import type { PartialsAnswer } from '../controller';
import { fmt } from './analysis';
import './perf.css';

function Operand({ title, block }: { title: string; block: OperandBlock }) {
  return (
    <div className="operand" data-testid={`operand-${title}`}>
      <h5>
        {title} <span className="muted">{block.format}</span>
      </h5>
      <p className="scales">
        {Object.entries(block.scales).map(([k, v]) => (
          <span key={k}>
            {k} = <code>{fmt(v, 6)}</code>
          </span>
        ))}
      </p>
      <div className="codes">
        {block.q.map((q, i) => (
          <span key={i}>{q}</span>
        ))}
      </div>
    </div>
  );
}

/** The deviation's block, for highlighting its row. */
const flagged = (d: Deviation) => (d.kind === 'none' ? undefined : d.block);

function Breakdown({ p, gpu, deviation }: { p: ElementPartials; gpu: number; deviation: Deviation }) {
  const [open, setOpen] = useState<number>(flagged(deviation) ?? 0);
  const peak = Math.max(1e-30, ...p.blocks.map((b) => Math.abs(b.contribution)));
  const shown = p.blocks[Math.min(open, p.blocks.length - 1)];
  const termKeys = Object.keys(p.blocks[0]?.terms ?? {});
  return (
    <>
      <p className={`deviation ${deviation.kind === 'none' ? 'good' : 'bad'}`} data-testid="drill-deviation">
        {deviationText(deviation)}
      </p>
      <p className="muted small">{p.formula}</p>
      <div className="kblocks-scroll">
        <table className="kblocks" data-testid="drill-table">
          <thead>
            <tr>
              <th>k-block</th>
              <th>k</th>
              {termKeys.map((t) => (
                <th key={t}>{t}</th>
              ))}
              <th>contribution</th>
              <th />
              <th>running sum</th>
              <th>GPU − running sum</th>
            </tr>
          </thead>
          <tbody>
            {p.blocks.map((b) => (
              <tr
                key={b.block}
                className={`${b.block === flagged(deviation) ? 'flag' : ''} ${b.block === open ? 'open' : ''}`}
                onClick={() => setOpen(b.block)}
                data-testid={`drill-row-${b.block}`}
              >
                <td>{b.block}</td>
                <td>
                  {b.k0}–{b.k0 + p.blockK - 1}
                </td>
                {termKeys.map((t) => (
                  <td key={t}>{fmt(b.terms[t], 5)}</td>
                ))}
                <td>{fmt(b.contribution, 6)}</td>
                <td className="barcell">
                  <span
                    className={b.contribution < 0 ? 'neg' : 'pos'}
                    style={{ width: `${(Math.abs(b.contribution) / peak) * 100}%` }}
                  />
                </td>
                <td>{fmt(b.cumulative, 6)}</td>
                <td>{fmt(gpu - b.cumulative, 3)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {shown && (
        <div className="operands" data-testid="drill-operands">
          <h4>
            k-block {shown.block} (k {shown.k0}–{shown.k0 + p.blockK - 1}): the blocks that feed it
          </h4>
          <Operand title="activation" block={shown.activation} />
          <Operand title="weight" block={shown.weight} />
        </div>
      )}
    </>
  );
}

/** The k-block drill-down of element `index` of a run. */
export function KBlockDrillDown({
  outcome,
  index,
  refMax,
}: {
  outcome: RunOutcome;
  index: number;
  refMax: number;
}) {
  const { controller } = useServices();
  const [answer, setAnswer] = useState<{ index: number; config: RunOutcome['config']; a: PartialsAnswer }>();
  const row = Math.floor(index / outcome.cols);
  const col = index % outcome.cols;
  useEffect(() => {
    let live = true;
    void controller.elementPartials(outcome.config, row, col).then((a) => {
      if (live) setAnswer({ index, config: outcome.config, a });
    });
    return () => {
      live = false;
    };
  }, [controller, outcome.config, row, col, index]);
  const current = answer && answer.index === index && answer.config === outcome.config ? answer.a : undefined;
  const gpu = outcome.output[index]!;
  return (
    <section className="drill" data-testid="drill">
      <h4>
        k-block contributions{' '}
        <span className="muted small">(oracle partials: the kernel does not expose its own)</span>
      </h4>
      {!current ? (
        <p className="muted small">computing the breakdown…</p>
      ) : 'partials' in current ? (
        <Breakdown
          p={current.partials}
          gpu={gpu}
          deviation={locateDeviation(current.partials, gpu, gateTolerance(outcome.verdict.gate, refMax))}
        />
      ) : (
        <p className="muted small" data-testid="drill-none">
          {'why' in current ? current.why : `no breakdown: ${current.error}`}
        </p>
      )}
    </section>
  );
}
