// Left column: kernel family, shape, tile, arm, plane width, data source, run options. Every change is a
// store action; the controller regenerates and re-runs. validate() messages explain a config that
// cannot run, so a bad shape never leaves a blank page.
import { useId } from 'react';
import {
  COOPMAT_STAGINGS,
  type CoopmatStaging,
  type KernelFamily,
  type TileParams,
} from '../../kernels/family';
import { defaultCoopmatStaging, type CoopmatArm } from '../../kernels/coopmat';
import { ARMS, int8ArmSupport, type Arm } from '../../kernels/gpu/caps';
import { useServices } from '../appContext';
import { PLANE_CHOICES } from '../permalink/codec';
import {
  act,
  configProblems,
  selectKernel,
  setArm,
  setAutoRun,
  setDataSource,
  setField,
  setIters,
  setPlane,
  setStaging,
  setTile,
  useApp,
} from '../store';

/** The integer shape fields, in display order; each shows only where the family lists it as a knob. */
const SHAPE_INPUTS: readonly { field: 'm' | 'n' | 'k' | 'experts' | 'topk' | 'ytiles'; hint?: string }[] = [
  { field: 'm' },
  { field: 'n' },
  { field: 'k' },
  { field: 'experts' },
  { field: 'topk' },
  { field: 'ytiles', hint: 'row tiles per expert in the grid (grid-stride)' },
];

const STAGING_LABEL: Record<CoopmatStaging, string> = {
  'one-pass': 'one pass (decode + round in the tile)',
  prepass: 'split: weight and activation pre-passes',
  'fused-prepass': 'split: both pre-passes in one dispatch',
  'in-gemm': 'split: B decoded from Q4_K in the GEMM',
};

const ARM_LABEL: Record<Arm, string> = {
  scalar: 'scalar',
  dp4a: 'dp4a (dot4I8Packed)',
  'subgroup-matrix': 'subgroup matrix',
};

function NumberInput(props: {
  label: string;
  value: number;
  onChange: (v: number) => void;
  testId: string;
  min?: number;
  hint?: string;
}) {
  const id = useId();
  return (
    <label className="field" htmlFor={id} title={props.hint}>
      <span>{props.label}</span>
      <input
        id={id}
        type="number"
        data-testid={props.testId}
        min={props.min ?? 1}
        value={Number.isFinite(props.value) ? props.value : ''}
        onChange={(e) => props.onChange(e.target.value === '' ? NaN : Number(e.target.value))}
      />
    </label>
  );
}

function ArmPicker({ family }: { family: KernelFamily }) {
  const arm = useApp((s) => s.config.arm);
  const caps = useApp((s) => s.device.caps);
  return (
    <fieldset className="arms" data-testid="arm-picker">
      <legend>Arm</legend>
      {ARMS.map((a) => {
        const inFamily = family.arms.includes(a);
        const support = caps ? int8ArmSupport(caps, a) : { ok: true as const };
        const reason = !inFamily
          ? `${family.title} has no ${a} arm`
          : support.ok
            ? undefined
            : support.reason;
        return (
          <label key={a} className={`arm ${reason ? 'disabled' : ''}`} title={reason}>
            <input
              type="radio"
              name="arm"
              value={a}
              checked={arm === a}
              disabled={!!reason}
              onChange={() => act(setArm, a)}
              data-testid={`arm-${a}`}
            />
            <span>{ARM_LABEL[a]}</span>
            {reason && <small className="reason">{reason}</small>}
          </label>
        );
      })}
    </fieldset>
  );
}

export function Controls() {
  const { families, controller } = useServices();
  const config = useApp((s) => s.config);
  const adapterPlane = useApp((s) => s.device.plane);
  const iters = useApp((s) => s.iters);
  const autoRun = useApp((s) => s.autoRun);
  const running = useApp((s) => s.run.status === 'running');
  const problems = useApp((s) => configProblems(s, families));
  const generatedProblems = useApp((s) => s.generated?.problems ?? []);
  const family = families.find((f) => f.id === config.kernel) ?? families[0]!;
  const knobs = new Set(family.knobs);
  const shown = [...new Set([...problems, ...generatedProblems])];
  const tileField = (f: keyof TileParams, hint: string) => (
    <NumberInput
      key={f}
      label={f}
      value={config.tile[f]}
      onChange={(v) => act(setTile, f, v)}
      testId={`tile-${f}`}
      hint={hint}
    />
  );

  return (
    <aside className="controls" aria-label="Kernel controls">
      <section>
        <h2>Kernel</h2>
        <select
          data-testid="kernel-select"
          value={config.kernel}
          onChange={(e) => {
            const f = families.find((x) => x.id === e.target.value);
            if (f) act(selectKernel, f);
          }}
        >
          {families.map((f) => (
            <option key={f.id} value={f.id}>
              {f.title}
            </option>
          ))}
        </select>
        <p className="summary">{family.summary}</p>
        <p className="seed-name">
          seed: <code>{family.seedName}</code>
        </p>
      </section>

      <section>
        <h2>Shape</h2>
        <div className="grid3">
          {SHAPE_INPUTS.map(({ field, hint }) =>
            knobs.has(field) ? (
              <NumberInput
                key={field}
                label={field}
                value={config[field]}
                onChange={(v) => act(setField, field, v)}
                testId={`shape-${field}`}
                {...(hint ? { hint } : {})}
              />
            ) : null,
          )}
        </div>
        {!knobs.has('m') && (
          <p className="muted">
            Fixed shape: {config.m}×{config.n}×{config.k}
          </p>
        )}
      </section>

      {knobs.has('tile') && (
        <section>
          <h2>Tile</h2>
          <div className="grid4">
            {tileField('wm', 'warp-grid rows (planes down the block)')}
            {tileField('wn', 'warp-grid cols (planes across the block)')}
            {tileField('rm', 'register subtiles per plane, down')}
            {tileField('rn', 'register subtiles per plane, across')}
          </div>
          <p className="muted">
            BM {config.tile.wm * config.tile.rm * 16} × BN {config.tile.wn * config.tile.rn * 16},{' '}
            {config.tile.wm * config.tile.wn} planes
          </p>
          {knobs.has('staging') && (
            <label
              className="field wide"
              title="how the operands reach the matrix work; the tuner searches it too"
            >
              <span>Staging</span>
              <select
                data-testid="staging-select"
                value={config.staging ?? ''}
                onChange={(e) =>
                  act(setStaging, e.target.value === '' ? undefined : (e.target.value as CoopmatStaging))
                }
              >
                <option value="">arm default ({defaultCoopmatStaging(config.arm as CoopmatArm)})</option>
                {COOPMAT_STAGINGS.map((s) => (
                  <option key={s} value={s}>
                    {STAGING_LABEL[s]}
                  </option>
                ))}
              </select>
            </label>
          )}
        </section>
      )}

      <section>
        <ArmPicker family={family} />
        <label className="field wide">
          <span>Plane width</span>
          <select
            data-testid="plane-select"
            value={config.plane}
            onChange={(e) => act(setPlane, Number(e.target.value))}
          >
            {PLANE_CHOICES.map((p) => (
              <option key={p} value={p}>
                {p === 0 ? `adapter default (${adapterPlane ?? '?'})` : p}
              </option>
            ))}
          </select>
        </label>
        <p className="muted">
          The scalar arm runs at any plane width dividing 256; the matrix arm needs the hardware plane.
        </p>
      </section>

      <section>
        <h2>Data</h2>
        <div className="seg" role="radiogroup" aria-label="Data source">
          {(['seed', 'random'] as const).map((d) => (
            <button
              key={d}
              type="button"
              role="radio"
              aria-checked={config.dataSource === d}
              className={config.dataSource === d ? 'on' : ''}
              onClick={() => act(setDataSource, d)}
              data-testid={`data-${d}`}
            >
              {d === 'seed' ? "seed's generator" : 'random (quantized f32)'}
            </button>
          ))}
        </div>
        <NumberInput
          label="seed #"
          min={0}
          value={config.dataSeed}
          onChange={(v) => act(setField, 'dataSeed', v)}
          testId="data-seed-number"
          hint="0 = the seed's own generator constant"
        />
      </section>

      <section>
        <h2>Run</h2>
        <div className="grid2">
          <NumberInput
            label="timed dispatches"
            min={0}
            value={iters}
            onChange={(v) => act(setIters, v)}
            testId="iters"
          />
          <label className="check">
            <input
              type="checkbox"
              checked={autoRun}
              onChange={(e) => act(setAutoRun, e.target.checked)}
              data-testid="auto-run"
            />
            <span>auto-run on edit</span>
          </label>
        </div>
        <div className="buttons">
          <button
            type="button"
            className="primary"
            onClick={() => controller.runNow()}
            disabled={shown.length > 0}
            data-testid="run"
          >
            Run <kbd>Ctrl/Alt+Enter</kbd>
          </button>
          <button
            type="button"
            onClick={() => controller.cancelRun()}
            disabled={!running}
            data-testid="cancel"
          >
            Cancel
          </button>
        </div>
      </section>

      {shown.length > 0 && (
        <section className="problems" role="alert" data-testid="problems">
          <h2>Cannot run this config</h2>
          <ul>
            {shown.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
          <button type="button" onClick={() => act(selectKernel, family)}>
            Back to {family.title} defaults
          </button>
        </section>
      )}
    </aside>
  );
}
