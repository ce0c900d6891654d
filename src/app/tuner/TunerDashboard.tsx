// The autotuner dashboard: the hunt form (a tunable family's problem: its shape and routing params from
// its own controls, a model preset, the data, and the search's parameters), live progress, the
// convergence and scatter charts, the sortable config table, the autokernel dispatch, and the stored runs
// (IndexedDB) with JSON export/import. Its state is the store's (a hunt keeps going while other tabs are
// shown); the controller talks to the worker and persists every measured config.
import type { ControlDecl, DataSource, FamilyCatalog } from '../../kernels/family';
import type { EvolutionParams, TuneRecordEntry } from '../../workers/protocol';
import type { TuneRun } from '../persistence/tuneRuns';
import { useServices } from '../appContext';
import { DATA_LABEL } from '../components/Controls';
import { DeclaredField } from '../components/DeclaredField';
import { NumberField } from '../components/NumberField';
import { PresetPicker } from '../components/PresetPicker';
import {
  act,
  catalogIn,
  formFor,
  importRead,
  setTunerData,
  setTunerEvo,
  setTunerForm,
  setTunerParam,
  tunable,
  useApp,
} from '../store';
import { tunerBlockers } from '../tunerController';
import { shapeParams } from '../../kernels/models/tensors';
import { excerpt } from '../../kernels/quant/untrustedText';
import { ConfigTable } from './ConfigTable';
import { importSummaryText, readImport } from './importSummary';
import { RunHistory } from './RunHistory';
import { ConfigScatter, ConvergenceChart } from './TunerCharts';
import { bestPerGenerationOf, finalsWallMs, formatMs, formatRel, huntSummary, ktExport } from './tunerData';
import './tuner.css';

const EVO_FIELDS: readonly {
  key: keyof EvolutionParams;
  label: string;
  min: number;
  max: number;
  hint: string;
}[] = [
  { key: 'population', label: 'population', min: 1, max: 256, hint: 'configs per generation' },
  { key: 'generations', label: 'generations', min: 1, max: 100, hint: 'generations of the genetic search' },
  {
    key: 'seed',
    label: 'search seed',
    min: 0,
    max: 0xffffffff,
    hint: "the search's random seed (not the data seed)",
  },
  {
    key: 'measureMs',
    label: 'ms per batch',
    min: 1,
    max: 10_000,
    hint: 'GPU time of each timed batch of a measurement',
  },
  {
    key: 'batches',
    label: 'batches',
    min: 1,
    max: 100,
    hint: 'timed batches per measurement; the fastest counts',
  },
  {
    key: 'banks',
    label: 'weight banks',
    min: 1,
    max: 16,
    hint: 'cold copies of the weight rotated between runs',
  },
];

function FormParam({ control, catalog }: { control: ControlDecl; catalog: FamilyCatalog }) {
  const params = useApp((s) => s.tuner.form.params);
  return (
    <DeclaredField
      control={control}
      params={{ ...catalog.defaults, ...params }}
      value={params[control.key] ?? catalog.defaults[control.key]}
      onCommit={(v) => act(setTunerParam, control.key, v)}
      id={`tuner:param:${control.key}`}
      testId={`tuner-param-${control.key}`}
      choiceClass="tuner-field"
      numberClass="tuner-field"
    />
  );
}

function Form() {
  const { controller } = useServices();
  const catalogs = useApp((s) => s.catalogs);
  const form = useApp((s) => s.tuner.form);
  const config = useApp((s) => s.config);
  const list = tunable(catalogs);
  const catalog = catalogIn({ catalogs }, form.kernel);
  const blockers = useApp(tunerBlockers);
  const hunt = useApp((s) => s.tuner.hunt);
  const auto = useApp((s) => s.tuner.auto);
  const running = hunt?.status === 'running';
  const busy = running || auto?.status === 'running';
  const playgroundTunable = !!catalogIn({ catalogs }, config.kernel)?.tuning;
  if (!catalog) return <p className="tuner-note">no family here declares a tuning search</p>;
  const sources: DataSource[] = ['reference', 'random', 'synthetic'];
  return (
    <>
      <div className="tuner-form">
        <label className="tuner-field tuner-field-wide">
          <span>family</span>
          <select
            data-testid="tuner-kernel"
            value={form.kernel}
            onChange={(e) => {
              const next = catalogIn({ catalogs }, e.target.value);
              if (next) act(setTunerForm, formFor(next, config, form.evo));
            }}
          >
            {list.map((c) => (
              <option key={c.id} value={c.id}>
                {c.tuning!.label}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          className="tuner-link"
          disabled={!playgroundTunable}
          title={
            playgroundTunable
              ? 'tune the playground’s shape and data'
              : 'the playground’s family has no tuning search'
          }
          onClick={() => {
            const c = catalogIn({ catalogs }, config.kernel);
            if (c) act(setTunerForm, formFor(c, config, form.evo));
          }}
          data-testid="tuner-use-playground"
        >
          use the playground&apos;s config
        </button>
        {catalog.controls
          .filter((c) => c.group !== 'tile')
          .map((c) => (
            <FormParam key={c.key} control={c} catalog={catalog} />
          ))}
        <label className="tuner-field">
          <span>data</span>
          <select
            data-testid="tuner-data"
            value={form.data.source}
            onChange={(e) =>
              act(setTunerData, { source: e.target.value as DataSource, seed: form.data.seed })
            }
          >
            {sources.map((d) => (
              <option key={d} value={d}>
                {DATA_LABEL[d].label}
              </option>
            ))}
            {form.data.tensor && <option value="tensor">tensor {excerpt(form.data.tensor.tensor)}</option>}
          </select>
        </label>
        <NumberField
          id="tuner:data:seed"
          label="data seed"
          value={form.data.seed}
          spec={{ label: 'data seed', min: 0, max: 0xffffffff }}
          onCommit={(v) => act(setTunerData, { ...form.data, seed: v })}
          testId="tuner-data-seed"
          className="tuner-field"
        />
        {EVO_FIELDS.map((f) => (
          <NumberField
            key={f.key}
            id={`tuner:evo:${f.key}`}
            label={f.label}
            value={form.evo[f.key]}
            spec={{ label: f.label, min: f.min, max: f.max }}
            hint={f.hint}
            onCommit={(v) => act(setTunerEvo, f.key, v)}
            testId={`tuner-${f.key}`}
            className="tuner-field"
          />
        ))}
      </div>
      <PresetPicker
        catalog={catalog}
        testPrefix="tuner"
        onApply={(g, rows) =>
          act(setTunerForm, {
            ...form,
            params: shapeParams(
              catalog,
              { ...catalog.defaults, ...form.params },
              {
                n: g.n,
                k: g.k,
                rows,
                ...(g.experts !== undefined ? { experts: g.experts } : {}),
                ...(g.topk !== undefined ? { topk: g.topk } : {}),
              },
            ),
            data: form.data.source === 'tensor' ? { source: 'reference', seed: form.data.seed } : form.data,
          })
        }
      />
      <div className="tuner-buttons">
        <button
          type="button"
          data-testid="tuner-hunt"
          disabled={busy || blockers.length > 0}
          title="replay the stored winner for this device and problem, or hunt"
          onClick={() => controller.tuner.hunt(false)}
        >
          hunt
        </button>
        <button
          type="button"
          data-testid="tuner-rehunt"
          disabled={busy || blockers.length > 0}
          title="hunt again, ignoring the stored winner"
          onClick={() => controller.tuner.hunt(true)}
        >
          re-hunt
        </button>
        <button
          type="button"
          data-testid="tuner-cancel"
          disabled={!running}
          onClick={() => controller.tuner.cancel()}
        >
          cancel
        </button>
        <button
          type="button"
          data-testid="tuner-autokernel"
          disabled={busy || blockers.length > 0}
          title="dispatch the stored winner (or the incumbent)"
          onClick={() => controller.tuner.autokernel()}
        >
          autokernel
        </button>
      </div>
      {blockers.length > 0 && !busy && (
        <ul className="tuner-blockers" data-testid="tuner-blockers">
          {blockers.map((b) => (
            <li key={b}>{b}</li>
          ))}
        </ul>
      )}
    </>
  );
}

function Status() {
  const { controller } = useServices();
  const hunt = useApp((s) => s.tuner.hunt);
  const deviceReady = useApp((s) => s.device.status === 'ready');
  const deviceId = useApp((s) => s.device.deviceId);
  if (!hunt)
    return (
      <div className="tuner-status" data-testid="tuner-status" data-state="idle">
        <span className="tuner-dim">
          hunt: replays the stored winner for this device and problem, or runs the genetic search
        </span>
      </div>
    );
  const r = hunt.report;
  const summary = r ? huntSummary(r) : undefined;
  const load = (e: TuneRecordEntry | undefined) =>
    e && controller.tuner.load({ ...hunt.base, arm: e.arm, params: { ...hunt.base.params, ...e.params } });
  return (
    <div className="tuner-status" data-testid="tuner-status" data-state={hunt.status}>
      <span className="tuner-problem mono">
        {hunt.op} · {hunt.problem}
      </span>{' '}
      {hunt.status === 'running' ? (
        <span data-testid="tuner-running">
          {hunt.stage ?? 'hunting'}&hellip; generation {hunt.generation} &middot; {hunt.entries.length}{' '}
          evaluated
          {hunt.resumed ? ` (${hunt.resumed} replayed from before)` : ''} &middot; best{' '}
          <span className="num">{formatMs(hunt.bestMs)}</span>
        </span>
      ) : hunt.status === 'interrupted' ? (
        <span data-testid="tuner-interrupted">
          <span className="tuner-badge tuner-badge-interrupted">interrupted</span> {hunt.entries.length}{' '}
          configs measured{hunt.stored ? ', saved' : ''}.{' '}
          <button
            type="button"
            className="tuner-link"
            data-testid="tuner-resume"
            disabled={!deviceReady || hunt.deviceId !== deviceId}
            title={hunt.deviceId !== deviceId ? `measured on another device (${hunt.deviceId})` : undefined}
            onClick={() => controller.tuner.resume()}
          >
            resume
          </button>{' '}
          <span className="tuner-dim">(what was measured is replayed, not measured again)</span>
        </span>
      ) : hunt.status === 'error' ? (
        <span className="tuner-error" role="alert" data-testid="tuner-error">
          {hunt.error}
        </span>
      ) : r && summary ? (
        <span
          data-testid="tuner-summary"
          data-winner={r.winner}
          data-kind={summary.kind}
          data-from-cache={String(!!hunt.fromCache)}
        >
          {hunt.fromCache ? (
            <span className="tuner-badge tuner-badge-cache" data-testid="tuner-from-cache">
              from cache
            </span>
          ) : null}{' '}
          {summary.label} <b className="mono">{r.winner || 'none passed the gate'}</b>{' '}
          {r.winner ? <span className="num">{formatMs(r.bestMs)}</span> : null}
          {summary.versus ? <span data-testid="tuner-versus"> &middot; {summary.versus}</span> : null}{' '}
          &middot; {r.entries.length} evaluated, {r.entries.filter((e) => e.verdict === 'rejected').length}{' '}
          rejected, {r.entries.filter((e) => e.verdict === 'failed-gate').length} failed the gate &middot;
          worst rel {formatRel(r.worstRel)}
          {r.gatedRows !== undefined ? ` (gate on ${r.gatedRows} sampled rows)` : ''}
          {r.winnerVerdict
            ? ` \u00b7 ${summary.kind === 'unproven' ? 'pick' : 'winner'} ${r.winnerVerdict.pass ? 'passes' : 'FAILS'} ${r.winnerVerdict.gate} on its whole output`
            : ''}
          {r.timing ? ` \u00b7 ${r.timing} timing` : ''} &middot;{' '}
          <span className="num">{(r.durationMs / 1000).toFixed(1)} s</span>
          {hunt.stored ? <span className="tuner-dim"> &middot; saved</span> : null}
          {r.winnerConfig ? (
            <>
              {' '}
              <button
                type="button"
                className="tuner-link"
                data-testid="tuner-load-winner"
                onClick={() => r.winnerConfig && controller.tuner.load(r.winnerConfig)}
              >
                load {summary.kind === 'unproven' ? 'pick' : 'winner'}
              </button>
            </>
          ) : (
            <button
              type="button"
              className="tuner-link"
              hidden={!r.winner}
              onClick={() => load(r.entries.find((e) => e.config === r.winner))}
            >
              load {summary.kind === 'unproven' ? 'pick' : 'winner'}
            </button>
          )}
        </span>
      ) : null}
    </div>
  );
}

export function TunerDashboard() {
  const { controller } = useServices();
  const deviceId = useApp((s) => s.device.deviceId);
  const tuner = useApp((s) => s.tuner);
  const hunt = tuner.hunt;
  const r = hunt?.report;
  const entries = hunt?.entries ?? [];
  const winner =
    r?.winner ??
    entries
      .filter((e) => e.verdict === 'measured')
      .reduce<TuneRecordEntry | undefined>((b, e) => (!b || e.ms < b.ms ? e : b), undefined)?.config ??
    '';
  const bestPerGeneration = r?.bestPerGeneration ?? bestPerGenerationOf(entries);
  const pick = (e: TuneRecordEntry) =>
    hunt && controller.tuner.load({ ...hunt.base, arm: e.arm, params: { ...hunt.base.params, ...e.params } });
  const auto = tuner.auto;

  const download = (text: string, type: string, name: string) => {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const a = document.createElement('a');
    a.href = url;
    a.download = name;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  const doExport = async () =>
    download(
      await controller.tuner.exportJson(),
      'application/json',
      `mmq-tune-runs-${new Date().toISOString().slice(0, 10)}.json`,
    );
  const exportRun = (run: TuneRun, format: 'json' | 'csv') =>
    download(
      ktExport(run.report, format),
      format === 'csv' ? 'text/csv' : 'application/json',
      `${run.kernel}-${run.problem.replace(/[^\w=.-]+/g, '_')}.${format === 'csv' ? 'csv' : 'kt.json'}`,
    );

  return (
    <section className="tuner" data-testid="tuner-dashboard">
      <header className="tuner-head">
        <h2>Autotuner</h2>
        <span className="tuner-dim mono" data-testid="tuner-device">
          {deviceId ?? 'no device'}
        </span>
      </header>
      <Form />
      {tuner.storeError ? <div className="tuner-error">{tuner.storeError}</div> : null}
      <Status />
      {r?.finals?.length ? (
        <div className="tuner-finals" data-testid="tuner-finals">
          finalists re-timed in turns (the fastest median of their re-timings is held against the incumbent
          {finalsWallMs(r.finals) === undefined
            ? ''
            : `; ${((finalsWallMs(r.finals) ?? 0) / 1000).toFixed(1)} s in all`}
          ):{' '}
          {r.finals.map((f, i) => (
            <span key={f.config} data-config={f.config}>
              {i ? ' \u00b7 ' : ''}
              <span className={f.config === r.winner ? 'mono tuner-pass' : 'mono'}>{f.config}</span>{' '}
              <span className="num">{formatMs(f.ms)}</span>
              <span className="tuner-dim"> (search {formatMs(f.searchMs)})</span>
            </span>
          ))}
        </div>
      ) : null}
      {auto ? (
        <div
          className="tuner-auto"
          data-testid="tuner-autokernel-result"
          data-served={auto.result?.served ?? ''}
        >
          {auto.status === 'running' ? (
            'autokernel: dispatching…'
          ) : auto.status === 'error' ? (
            <span className="tuner-error">{auto.error}</span>
          ) : auto.result ? (
            <>
              autokernel served <b className="mono">{auto.result.served}</b> &middot;{' '}
              <span className={auto.result.verdict.pass ? 'tuner-pass' : 'tuner-fail'}>
                {auto.result.verdict.pass ? 'pass' : 'FAIL'}
              </span>{' '}
              rel {formatRel(auto.result.verdict.relToMax)}
              {auto.result.ms !== undefined ? (
                <span className="num"> &middot; {formatMs(auto.result.ms)}</span>
              ) : null}
              {auto.result.fallback ? (
                <span className="tuner-dim"> &middot; {auto.result.fallback}</span>
              ) : null}{' '}
              <button
                type="button"
                className="tuner-link"
                onClick={() => auto.result && controller.tuner.load(auto.result.config)}
              >
                load
              </button>
            </>
          ) : null}
        </div>
      ) : null}
      <div className="tuner-charts">
        <ConvergenceChart
          bestPerGeneration={bestPerGeneration}
          incumbentMs={r?.incumbentMs}
          winnerRetimedMs={r?.finals?.length ? r.bestMs : undefined}
        />
        <ConfigScatter entries={entries} winner={winner} onPick={pick} />
      </div>
      <ConfigTable entries={entries} winner={winner} onPick={pick} />
      <RunHistory
        runs={tuner.runs ?? []}
        deviceId={deviceId}
        selected={hunt?.stored ? hunt.key : undefined}
        onShow={(run) => controller.tuner.show(run)}
        onDelete={(run) => controller.tuner.remove(run)}
        onExport={() => void doExport()}
        onExportRun={exportRun}
        onImport={(f) => {
          act(importRead, undefined);
          controller.tuner.importJson(f);
          // What the file holds, said beside the import's own note (the controller stores it).
          void f.text().then((text) => act(importRead, readImport(f.name, text)));
        }}
        importError={tuner.importError}
        importNote={tuner.importNote}
        importRead={tuner.importRead ? importSummaryText(tuner.importRead) : undefined}
      />
    </section>
  );
}

export default TunerDashboard;
