// Left column: kernel family, its controls (read from the family's declaration: shape, routing, tile and
// choice knobs with their ranges, steps and hints), a model preset, the arm (with the adapter's reason
// when one cannot run), plane width, data source and data seed, and how a run is timed. Every change is a
// store action; the controller regenerates and re-runs. Problems are listed once, in the family's words.
import type { ControlDecl, DataSource, FamilyCatalog } from '../../kernels/family';
import { excerpt } from '../../kernels/quant/untrustedText';
import { PLANE_CHOICES } from '../permalink/codec';
import {
  act,
  applyGemm,
  configProblems,
  currentCatalog,
  draftProblems,
  resetToDefaults,
  selectKernel,
  setArm,
  setDataSeed,
  setDataSource,
  setParam,
  setPlane,
  setRunOptions,
  setTab,
  useApp,
} from '../store';
import { DeclaredField } from './DeclaredField';
import { NumberField } from './NumberField';
import { PresetPicker } from './PresetPicker';

const GROUPS: readonly { group: ControlDecl['group']; title: string }[] = [
  { group: 'shape', title: 'Shape' },
  { group: 'route', title: 'Routing' },
  { group: 'tile', title: 'Tile' },
];

/** The data sources in words (the glossary says more). */
export const DATA_LABEL: Record<DataSource, { label: string; hint: string }> = {
  reference: {
    label: 'reference generator',
    hint: "the reference module's own deterministic generators (its xorshift streams, bit for bit)",
  },
  random: {
    label: 'random, ggml-quantized',
    hint: "random f32 data put through ggml's quantizers (so the error split has the unquantized data)",
  },
  synthetic: {
    label: 'synthetic (fast)',
    hint: "random codes and scales in the reference's ranges: fast to make at prefill sizes",
  },
  tensor: { label: 'model tensor', hint: 'a tensor of an opened GGUF file as the weight (Model tab)' },
};

/** The seed-like number fields' spec: a 32-bit data seed. */
const SEED_SPEC = { label: 'data seed', min: 0, max: 0xffffffff };

function ControlField({ control }: { control: ControlDecl }) {
  const params = useApp((s) => s.config.params);
  const problems = useApp(configProblems);
  const step = control.kind === 'int' ? control.step(params) : 1;
  return (
    <DeclaredField
      control={control}
      params={params}
      value={params[control.key]}
      onCommit={(v) => act(setParam, control.key, v)}
      id={`param:${control.key}`}
      testId={`param-${control.key}`}
      choiceClass="field wide"
      invalid={problems.some((p) => p.startsWith(`${control.label} `))}
      hint={`${control.hint ?? control.label}${step > 1 ? ` (ArrowUp/Down steps by ${step})` : ''}`}
    />
  );
}

/** "BM 32 × BN 64 · 8 planes": the block the family's declared tile gives at these params. */
function TileSummary({ catalog }: { catalog: FamilyCatalog }) {
  const params = useApp((s) => s.config.params);
  const block = catalog.tile?.block(params);
  if (!block) return null;
  return (
    <p className="muted small" data-testid="tile-summary">
      block BM {block.rows} × BN {block.cols} · {block.planes} plane{block.planes === 1 ? '' : 's'}
    </p>
  );
}

function ArmPicker({ catalog }: { catalog: FamilyCatalog }) {
  const arm = useApp((s) => s.config.arm);
  const params = useApp((s) => s.config.params);
  const caps = useApp((s) => s.device.caps);
  const status = useApp((s) => s.device.status);
  return (
    <fieldset className="arms" data-testid="arm-picker">
      <legend title="an arm is one implementation of the kernel's inner product (see the glossary)">
        Arm
      </legend>
      {catalog.arms.map((a, i) => {
        const reason = caps
          ? a.unavailable(caps, params)
          : i === 0
            ? undefined
            : status === 'unavailable'
              ? 'no WebGPU adapter here'
              : 'waiting for the GPU adapter';
        return (
          <label key={a.arm} className={`arm ${reason ? 'disabled' : ''}`}>
            <input
              type="radio"
              name="arm"
              value={a.arm}
              checked={arm === a.arm}
              disabled={!!reason}
              onChange={() => act(setArm, a.arm)}
              data-testid={`arm-${a.arm}`}
            />
            <span>{a.label}</span>
            {reason && <small className="reason">{reason}</small>}
          </label>
        );
      })}
    </fieldset>
  );
}

function DataControls({ catalog }: { catalog: FamilyCatalog }) {
  const data = useApp((s) => s.config.data);
  const hasModel = useApp((s) => s.models.files.length > 0);
  const sources: DataSource[] = ['reference', 'random', 'synthetic'];
  return (
    <section>
      <h2>Data</h2>
      <div className="seg wrap" role="radiogroup" aria-label="Data source">
        {sources.map((d) => (
          <button
            key={d}
            type="button"
            role="radio"
            aria-checked={data.source === d}
            className={data.source === d ? 'on' : ''}
            title={DATA_LABEL[d].hint}
            onClick={() => act(setDataSource, d as Exclude<DataSource, 'tensor'>)}
            data-testid={`data-${d}`}
          >
            {DATA_LABEL[d].label}
          </button>
        ))}
        <button
          type="button"
          role="radio"
          aria-checked={data.source === 'tensor'}
          className={data.source === 'tensor' ? 'on' : ''}
          disabled={!catalog.takes}
          title={catalog.takes ? DATA_LABEL.tensor.hint : `${catalog.title} runs on generated data only`}
          onClick={() => act(setTab, 'model')}
          data-testid="data-tensor"
        >
          {DATA_LABEL.tensor.label}
          {data.source !== 'tensor' && catalog.takes ? (hasModel ? ': pick one…' : ': open a file…') : ''}
        </button>
      </div>
      {data.source === 'tensor' && data.tensor && (
        <p className="small tensor-choice" data-testid="tensor-choice">
          weight <code>{excerpt(data.tensor.tensor)}</code> of <code>{excerpt(data.tensor.file.name)}</code>,
          activation {data.tensor.activation === 'outliers' ? 'normal with outlier channels' : 'normal'}
        </p>
      )}
      <NumberField
        id="data:seed"
        label="data seed"
        value={data.seed}
        spec={SEED_SPEC}
        hint="0 = the reference generator's own constant; any other number draws another stream (for a model tensor: the activation)"
        onCommit={(v) => act(setDataSeed, v)}
        testId="data-seed-number"
      />
    </section>
  );
}

function RunOptions() {
  const o = useApp((s) => s.runOptions);
  return (
    <section>
      <h2>Timing</h2>
      <label className="check" title="time the whole plan and each pass after the correctness run">
        <input
          type="checkbox"
          checked={o.timed}
          onChange={(e) => act(setRunOptions, { timed: e.target.checked })}
          data-testid="timed"
        />
        <span>time the run</span>
      </label>
      <div className="grid2">
        <NumberField
          id="run:targetMs"
          label="ms per batch"
          value={o.targetMs}
          spec={{ label: 'ms per batch', min: 1, max: 10_000 }}
          hint="GPU time each timed batch lasts: its run count is calibrated to it (at least 10 ms keeps a browser's 100 µs timestamps fine enough)"
          onCommit={(v) => act(setRunOptions, { targetMs: v })}
          testId="timing-target"
          disabled={!o.timed}
        />
        <NumberField
          id="run:batches"
          label="batches"
          value={o.batches}
          spec={{ label: 'batches', min: 1, max: 100 }}
          hint="timed batches (as many again when they disagree); the fastest counts"
          onCommit={(v) => act(setRunOptions, { batches: v })}
          testId="timing-batches"
          disabled={!o.timed}
        />
      </div>
      <label className="check" title="run the ownership-recording variant too (the Ownership view)">
        <input
          type="checkbox"
          checked={o.instrument}
          onChange={(e) => act(setRunOptions, { instrument: e.target.checked })}
          data-testid="instrument"
        />
        <span>record ownership</span>
      </label>
      <label className="check">
        <input
          type="checkbox"
          checked={o.autoRun}
          onChange={(e) => act(setRunOptions, { autoRun: e.target.checked })}
          data-testid="auto-run"
        />
        <span>run after each change</span>
      </label>
    </section>
  );
}

/** A problem message is cut here: it may quote a name from a file or a link of any length. */
const PROBLEM_CHARS = 400;

export function Problems() {
  const problems = useApp(configProblems);
  const generatedProblems = useApp((s) =>
    s.generatedKey && !configProblems(s).length ? (s.generated?.problems ?? []) : [],
  );
  const drafts = useApp((s) => draftProblems(s.drafts));
  const catalog = useApp(currentCatalog);
  const shown = [...new Set([...problems, ...generatedProblems])];
  if (!shown.length) return null;
  return (
    <section className="problems" role="alert" data-testid="problems">
      <h2>Cannot run this config</h2>
      <ul>
        {/* Messages may quote names from a model file or a link: shown escaped. */}
        {shown.map((p) => (
          <li key={p}>{excerpt(p, PROBLEM_CHARS)}</li>
        ))}
      </ul>
      {drafts.length > 0 && (
        <p className="small muted">Fields still being typed are marked where they are.</p>
      )}
      <button type="button" onClick={() => act(resetToDefaults)} data-testid="defaults">
        Back to {catalog.title} defaults
      </button>
    </section>
  );
}

/** The kernel family: pick one, its title, summary and reference kernel. */
function KernelSection({ catalog }: { catalog: FamilyCatalog }) {
  const catalogs = useApp((s) => s.catalogs);
  return (
    <section>
      <h2>Kernel</h2>
      <select
        data-testid="kernel-select"
        value={catalog.id}
        onChange={(e) => {
          const f = catalogs.find((x) => x.id === e.target.value);
          if (f) act(selectKernel, f);
        }}
      >
        {catalogs.map((f) => (
          <option key={f.id} value={f.id}>
            {f.title}
          </option>
        ))}
      </select>
      <p className="kernel-title" data-testid="kernel-title">
        {catalog.title}
      </p>
      <p className="summary">{catalog.summary}</p>
      <p className="small muted">
        reference kernel <code>{catalog.reference}</code> ·{' '}
        {catalog.arithmetic === 'f16' ? 'f16 GEMM' : 'int8 GEMM'}
      </p>
    </section>
  );
}

/** The arm, and the plane width (the adapter's unless chosen). */
function ArmAndPlane({ catalog }: { catalog: FamilyCatalog }) {
  const planeChoice = useApp((s) => s.config.plane);
  const adapterPlane = useApp((s) => s.device.plane);
  const status = useApp((s) => s.device.status);
  return (
    <section>
      <ArmPicker catalog={catalog} />
      <label
        className="field wide"
        title="the width every partition divides by; the matrix arm needs the hardware's"
      >
        <span>plane width</span>
        <select
          data-testid="plane-select"
          value={planeChoice ?? ''}
          onChange={(e) => act(setPlane, e.target.value === '' ? undefined : Number(e.target.value))}
        >
          <option value="">
            {adapterPlane !== undefined
              ? `the adapter's (${adapterPlane})`
              : status === 'unavailable'
                ? 'the adapter’s (no adapter here)'
                : 'the adapter’s (once known)'}
          </option>
          {PLANE_CHOICES.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
    </section>
  );
}

export function Controls() {
  const catalog = useApp(currentCatalog);
  const collapsed = useApp((s) => s.layout.controlsCollapsed);
  if (collapsed) return null;
  return (
    <aside className="controls" aria-label="Kernel controls">
      <KernelSection catalog={catalog} />

      {catalog.controls.length === 0 && (
        <section>
          <h2>Shape</h2>
          <p className="muted small">Fixed shape: this kernel has no knobs.</p>
        </section>
      )}
      {GROUPS.map(({ group, title }) => {
        const controls = catalog.controls.filter((c) => c.group === group);
        if (!controls.length) return null;
        return (
          <section key={group} data-testid={`group-${group}`}>
            <h2>{title}</h2>
            <div className="grid3">
              {controls.map((c) => (
                <ControlField key={c.key} control={c} />
              ))}
            </div>
            {group === 'shape' && (
              <PresetPicker
                catalog={catalog}
                testPrefix="shape"
                onApply={(g, rows) => act(applyGemm, g, rows)}
              />
            )}
            {group === 'tile' && <TileSummary catalog={catalog} />}
          </section>
        );
      })}

      <ArmAndPlane catalog={catalog} />
      <DataControls catalog={catalog} />
      <RunOptions />
    </aside>
  );
}
