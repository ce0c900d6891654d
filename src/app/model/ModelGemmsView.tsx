// The model view: a model's GEMMs on this adapter. A built-in preset or an opened GGUF (its header only)
// as one forward pass of distinct GEMMs grouped by (type, n, k, bank) with their launches per pass; run at
// the prefill rows chosen and at decode, each GEMM's pick across families (the family, its arm and knobs,
// ms with its batches' spread, % of this adapter's measured roof, its roofline point, the next family and
// the margin) and the totals per pass; a guess that runs nothing and says so; "tune all"; runs of other
// adapters imported beside it. Names from files are shown escaped. Loaded with the Model file tab's chunk
// on first use (it brings the charting library).
import { useMemo, useRef } from 'react';
import {
  compareModelRuns,
  modelRunTable,
  phaseNotes,
  phaseTotals,
  pickPoint,
  winnerOf,
  type ModelRun,
} from '../../kernels/models/modelRun';
import { MODEL_PRESETS } from '../../kernels/models/presets';
import { PASS_FORMATS, type ForwardPass, type PassFormat } from '../../kernels/models/forward';
import { formatMs } from '../../kernels/perf/estimate';
import { peakOpsOf } from '../../kernels/perf/roofline';
import { excerpt } from '../../kernels/quant/untrustedText';
import { useServices } from '../appContext';
import { NumberField } from '../components/NumberField';
import type { OpenedModel } from '../../workers/protocol';
import {
  MODEL_RUN_SCOPE,
  modelRunBlockers,
  modelRunControllerFor,
  type ModelRunController,
} from '../modelRunController';
import { MeasurePeaksButton, useAdapterPeaks, type AdapterPeaks } from '../perf/adapterPeaks';
import { rooflineChart, si } from '../perf/perfView';
import { RooflineChart } from '../perf/RooflineChart';
import './model.css';
import { act, useApp } from '../store';
import {
  chosenPass,
  fileSource,
  MODEL_RUN_MAX_M,
  modelRunOf,
  setModelRun,
  setModelRunForm,
  type ModelRunForm,
  type ModelRunState,
} from '../store/modelRun';

/** Save text as a file (the browser's download). */
function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The winners of a phase under one roofline: the roof most of its launches run on. */
function PhaseRoofline({ run, phase }: { run: ModelRun; phase: number }) {
  const peaks = run.peaks;
  const p = run.phases[phase]!;
  const points = run.gemms.flatMap((g, i) => {
    const w = winnerOf(p.picks[i]);
    const point = w && pickPoint(w, peaks);
    return point ? [{ label: `${g.key} (${w.kernel})`, kind: 'plan' as const, point, weight: g.count }] : [];
  });
  if (!peaks || !points.length) return null;
  const share = new Map<string, number>();
  for (const x of points) share.set(x.point.roof, (share.get(x.point.roof) ?? 0) + x.weight);
  const roof = [...share].sort((a, b) => b[1] - a[1])[0]![0] as Parameters<typeof peakOpsOf>[1];
  const ops = peakOpsOf(peaks, roof);
  const chart = rooflineChart(
    points,
    { bandwidthGBs: peaks.bandwidthGBs, ...(ops !== undefined ? { ops } : {}) },
    [],
    0,
    `no ${roof} peak was measured`,
  );
  return (
    <div className="model-roofline">
      <p className="muted small">
        Each GEMM&apos;s winner under this adapter&apos;s roofs (the {roof} roof, the one most launches run
        on; the table gives each its own).
      </p>
      <RooflineChart chart={chart} runName="GEMMs" testId={`model-roofline-${p.phase}`} />
    </div>
  );
}

/** A phase's table (the same cells `mmq model` prints), its notes and its totals. */
function PhaseTable({ run, phase }: { run: ModelRun; phase: number }) {
  const p = run.phases[phase]!;
  const [head, ...rows] = modelRunTable(run, phase);
  const body = rows.slice(0, -1);
  const total = rows.at(-1)!;
  const t = phaseTotals(run, phase);
  return (
    <section className="model-phase" data-testid={`model-phase-${p.phase}`}>
      <h4>
        {p.phase === 'decode' ? 'Decode (m = 1)' : `Prefill of ${p.m} tokens`}
        <span className="muted small" data-testid={`model-total-${p.phase}`}>
          {' '}
          · GEMMs {t.ms > 0 ? formatMs(t.ms) : '–'} per {p.phase === 'decode' ? 'token' : 'prefill'}
          {t.tokensPerS !== undefined ? ` · ${t.tokensPerS.toPrecision(4)} tokens/s (GEMMs only)` : ''}
          {t.missing.length ? ` · ${t.coveredLaunches} of ${t.launches} launches covered` : ''}
        </span>
      </h4>
      <div className="table-wrap">
        <table className="tensors model-table">
          <thead>
            <tr>
              {head!.map((h) => (
                <th key={h}>{h}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {body.map((cells, i) => (
              <tr
                key={run.gemms[i]!.key}
                data-testid="model-gemm"
                data-key={run.gemms[i]!.key}
                data-winner={p.picks[i]?.winner ?? ''}
              >
                {cells.map((c, j) => (
                  <td key={j} className={j === 0 || j === 4 || j === 8 ? '' : 'mono'}>
                    {c}
                  </td>
                ))}
              </tr>
            ))}
            <tr className="model-total">
              {total.map((c, j) => (
                <td key={j}>
                  <strong>{c}</strong>
                </td>
              ))}
            </tr>
          </tbody>
        </table>
      </div>
      {phaseNotes(run, phase).map((n) => (
        <p key={n} className="muted small" data-testid="model-no-pick">
          no pick: {n}
        </p>
      ))}
      <PhaseRoofline run={run} phase={phase} />
    </section>
  );
}

/** Runs of several adapters side by side: each GEMM's winner, its ms and % of its own adapter's roof. */
function Comparison({
  runs,
  firstImported,
  onRemove,
}: {
  runs: ModelRun[];
  /** Where the imported runs start in `runs` (after the run on display, when there is one). */
  firstImported: number;
  onRemove: (importedIndex: number) => void;
}) {
  const rows = useMemo(() => compareModelRuns(runs), [runs]);
  return (
    <section className="model-compare" data-testid="model-compare">
      <h4>Across adapters</h4>
      <div className="table-wrap">
        <table className="tensors">
          <thead>
            <tr>
              <th>phase</th>
              <th>GEMM</th>
              {runs.map((r, i) => (
                <th key={i} data-testid="model-compare-adapter">
                  {excerpt(r.adapter.name, 60)}
                  <span className="muted small">
                    {' '}
                    {excerpt(r.model.name, 40)}, {r.startedAt.slice(0, 10)}
                    {r.measured ? '' : ', a guess'}
                  </span>
                  {i >= firstImported && (
                    <button type="button" className="link" onClick={() => onRemove(i - firstImported)}>
                      remove
                    </button>
                  )}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={`${row.phase}|${row.m}|${row.key}`} data-testid="model-compare-row">
                <td>{row.phase === 'decode' ? 'decode' : `prefill ${row.m}`}</td>
                <td>
                  {excerpt(row.key, 60)} <span className="muted small">{row.uses}</span>
                </td>
                {row.cells.map((c, i) => (
                  <td key={i} className="mono">
                    {c
                      ? `${c.ms.toPrecision(4)} ms · ${c.peakFraction !== undefined ? `${(100 * c.peakFraction).toFixed(1)}% of roof · ` : ''}${excerpt(c.kernel, 40)} ${c.arithmetic ?? ''} ${c.arm ?? ''}`
                      : '–'}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** The first toolbar: which model (a preset with its weights' format, or an opened file) and which phases. */
function RunForm({
  form,
  files,
  source,
}: {
  form: ModelRunForm;
  files: readonly OpenedModel[];
  source: string;
}) {
  return (
    <div className="toolbar">
      <label className="field">
        <span>model</span>
        <select
          data-testid="model-run-source"
          value={source}
          onChange={(e) => act(setModelRunForm, { source: e.target.value })}
        >
          {MODEL_PRESETS.map((p) => (
            <option key={p.id} value={`preset:${p.id}`}>
              {p.name} (preset)
            </option>
          ))}
          {files.map((f) => (
            <option key={fileSource(f)} value={fileSource(f)}>
              {excerpt(f.file.name, 60)} (opened file)
            </option>
          ))}
        </select>
      </label>
      {!source.startsWith('file:') && (
        <label className="field">
          <span>weights</span>
          <select
            data-testid="model-run-format"
            value={form.format}
            onChange={(e) => act(setModelRunForm, { format: e.target.value as PassFormat })}
          >
            {PASS_FORMATS.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </label>
      )}
      <PhaseFields form={form} />
    </div>
  );
}

/** The phases a run times: prefill of m tokens, decode. */
function PhaseFields({ form }: { form: ModelRunForm }) {
  return (
    <>
      <label className="check">
        <input
          type="checkbox"
          data-testid="model-run-prefill"
          checked={form.prefill}
          onChange={(e) => act(setModelRunForm, { prefill: e.target.checked })}
        />
        prefill
      </label>
      <NumberField
        id={`${MODEL_RUN_SCOPE}:m`}
        label="prefill tokens (m)"
        value={form.m}
        spec={{ label: 'prefill tokens', min: 1, max: MODEL_RUN_MAX_M }}
        hint="the rows every GEMM but the output head multiplies at prefill"
        onCommit={(m) => act(setModelRunForm, { m })}
        testId="model-run-m"
        disabled={!form.prefill}
      />
      <label className="check">
        <input
          type="checkbox"
          data-testid="model-run-decode"
          checked={form.decode}
          onChange={(e) => act(setModelRunForm, { decode: e.target.checked })}
        />
        decode (m = 1)
      </label>
    </>
  );
}

/** The second toolbar: run, guess, tune all, cancel, the peaks, and a run's export and import. */
function RunActions({
  ctl,
  state,
  canRun,
  peaks,
}: {
  ctl: ModelRunController;
  state: ModelRunState;
  canRun: boolean;
  peaks: AdapterPeaks;
}) {
  const { current: run, busy } = state;
  return (
    <div className="toolbar">
      <button
        type="button"
        className="primary"
        disabled={!canRun}
        onClick={() => ctl.run()}
        data-testid="model-run-go"
      >
        Run: pick and time each GEMM
      </button>
      <button type="button" disabled={!canRun} onClick={() => ctl.guess()} data-testid="model-run-guess">
        Guess (no measurement)
      </button>
      <button type="button" disabled={!canRun} onClick={() => ctl.tuneAll()} data-testid="model-run-tune">
        Tune all, then run
      </button>
      {busy && (
        <button type="button" onClick={() => ctl.cancel()} data-testid="model-run-cancel">
          Cancel
        </button>
      )}
      <MeasurePeaksButton peaks={peaks} testId="model-run-peaks" />
      <button
        type="button"
        disabled={!run || busy !== undefined}
        onClick={() => {
          const text = ctl.exportJson();
          if (text && run)
            download(`model-run-${run.model.name}-${run.adapter.name}.json`.replace(/[^\w.-]+/g, '-'), text);
        }}
        data-testid="model-run-export"
      >
        Export JSON
      </button>
      <ImportRun ctl={ctl} />
    </div>
  );
}

/** Import another adapter's run: a button that opens the hidden file input. */
function ImportRun({ ctl }: { ctl: ModelRunController }) {
  const importInput = useRef<HTMLInputElement>(null);
  return (
    <>
      <button type="button" onClick={() => importInput.current?.click()} data-testid="model-run-import">
        Import another adapter&apos;s run…
      </button>
      <input
        ref={importInput}
        type="file"
        accept=".json,application/json"
        hidden
        data-testid="model-run-import-input"
        onChange={(e) => {
          const f = e.target.files?.[0];
          e.target.value = '';
          if (f) void f.text().then((t) => ctl.importJson(t));
        }}
      />
    </>
  );
}

/** Why it cannot run, what it is doing, the guard's question, and what failed. */
function RunStatus({
  ctl,
  state,
  blockers,
}: {
  ctl: ModelRunController;
  state: ModelRunState;
  blockers: string[];
}) {
  const { busy, confirm, error } = state;
  return (
    <>
      {!busy && blockers.length > 0 && (
        <p className="muted small" data-testid="model-run-blocked">
          {blockers.map((b) => excerpt(b, 300)).join('; ')}
        </p>
      )}
      {busy && (
        <p className="small" data-testid="model-run-progress">
          <progress max={1} value={busy.fraction} /> {busy.what === 'tune' ? 'tuning' : 'running'}:{' '}
          {excerpt(busy.stage, 300)}
        </p>
      )}
      {confirm && (
        <div className="banner warn" role="alert" data-testid="model-run-estimate">
          <span>
            {confirm.what === 'tune' ? 'Tuning all and the run are' : 'This model run is'} estimated at{' '}
            <strong>{formatMs(confirm.ms)}</strong> on this adapter ({confirm.basis}). Ask for less (decode
            alone, fewer prefill tokens), guess instead, or start it anyway; it can be cancelled at any time.
          </span>
          <button
            type="button"
            onClick={() => (confirm.what === 'tune' ? ctl.tuneAll(true) : ctl.run(true))}
            data-testid="model-run-anyway"
          >
            Start anyway
          </button>
          <button type="button" onClick={() => act(setModelRun, { confirm: undefined })}>
            Not now
          </button>
        </div>
      )}
      {error && (
        <p className="run-error" role="alert" data-testid="model-run-error">
          {excerpt(error, 600)}
        </p>
      )}
    </>
  );
}

/** The run on display: its head line (model, adapter, a guess or not, the peaks), its phases and notes. */
function RunResults({ run }: { run: ModelRun }) {
  return (
    <>
      <p className="small" data-testid="model-run-head">
        {excerpt(run.model.name)} on {excerpt(run.adapter.name)}: {run.gemms.length} GEMM shapes per forward
        pass
        {run.adapter.software ? ' · a CPU adapter: its times are not a GPU’s' : ''}
        {run.measured
          ? ''
          : ' · A GUESS: nothing was run, each family at the roofs of the measured peaks (else a default rate)'}
        {run.status === 'cancelled' ? ' · cancelled' : ''}
        {run.peaks
          ? ` · peaks ${run.peaks.bandwidthGBs.toPrecision(3)} GB/s, ${Object.entries(run.peaks.ops)
              .map(([r, v]) => `${r} ${si(v)}`)
              .join(', ')}`
          : ' · no measured peaks: no % of roof'}
      </p>
      {run.phases.map((_, i) => (
        <PhaseTable key={i} run={run} phase={i} />
      ))}
      {run.notes.map((n) => (
        <p key={n} className="muted small">
          note: {excerpt(n, 300)}
        </p>
      ))}
    </>
  );
}

/** Before a run: the forward pass's GEMMs, their weights and launches per pass. */
function PassTable({ pass }: { pass: ForwardPass }) {
  return (
    <div className="table-wrap">
      <p className="muted small">
        {excerpt(pass.name)}: one forward pass, {pass.gemms.length} GEMM shapes
        {pass.blocks ? ` over ${pass.blocks} blocks` : ''}. Run picks a family for each.
      </p>
      <table className="tensors model-table" data-testid="model-pass">
        <thead>
          <tr>
            <th>GEMM</th>
            <th>weight</th>
            <th>x/pass</th>
            <th>note</th>
          </tr>
        </thead>
        <tbody>
          {pass.gemms.map((g) => (
            <tr key={g.key} data-testid="model-pass-gemm" data-key={g.key}>
              <td>{g.uses.map((u) => `${excerpt(u.name, 40)} x${u.count}`).join(', ')}</td>
              <td className="mono">{excerpt(g.key, 80)}</td>
              <td className="mono">{g.count}</td>
              <td className="muted small">
                {g.note ? excerpt(g.note, 200) : g.head ? 'the output head: one row at prefill too' : ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export default function ModelGemmsView() {
  const { controller } = useServices();
  const ctl = modelRunControllerFor(controller.modelRunEnv);
  const state = useApp((s) => modelRunOf(s));
  const files = useApp((s) => s.models.files);
  const blockers = useApp((s) => modelRunBlockers(s));
  const peaks = useAdapterPeaks();
  const { form, current: run, busy, imported } = state;
  const chosen = useMemo(() => chosenPass(form, files), [form, files]);
  const source = form.source || `preset:${MODEL_PRESETS[0]!.id}`;
  const pass = 'pass' in chosen ? chosen.pass : undefined;
  const canRun = !busy && !blockers.length;

  return (
    <section className="model-gemms" data-testid="model-gemms">
      <h3>This model&apos;s GEMMs on your GPU</h3>
      <RunForm form={form} files={files} source={source} />
      <RunActions ctl={ctl} state={state} canRun={canRun} peaks={peaks} />
      <RunStatus ctl={ctl} state={state} blockers={blockers} />
      {run ? <RunResults run={run} /> : pass ? <PassTable pass={pass} /> : null}
      {imported.length > 0 && (
        <Comparison
          runs={run ? [run, ...imported] : imported}
          firstImported={run ? 1 : 0}
          onRemove={(i) => ctl.removeImported(i)}
        />
      )}
    </section>
  );
}
