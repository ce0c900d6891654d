// The tuner's hunt form: a tunable family's problem (its shape and routing params from its own controls, a
// model preset, the data) and the search's parameters, the buttons that hunt, re-hunt, cancel and dispatch
// the autokernel, and why the form cannot hunt now. Its state is the store's tuner form.
import type { ControlDecl, DataSource, FamilyCatalog } from '../../kernels/family';
import { shapeParams } from '../../kernels/tensors';
import { excerpt } from '../../kernels/quant/untrustedText';
import type { EvolutionParams } from '../../workers/protocol';
import { useServices } from '../appContext';
import { DATA_LABEL } from '../components/Controls';
import { DeclaredField } from '../components/DeclaredField';
import { NumberField } from '../components/NumberField';
import { PresetPicker } from '../components/PresetPicker';
import {
  act,
  catalogIn,
  formFor,
  setTunerData,
  setTunerEvo,
  setTunerForm,
  setTunerParam,
  tunable,
  useApp,
} from '../store';
import { tunerBlockers } from '../tunerController';

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

/** The family picker, and the button that takes the playground's family, shape and data. */
function FamilyField() {
  const catalogs = useApp((s) => s.catalogs);
  const form = useApp((s) => s.tuner.form);
  const config = useApp((s) => s.config);
  const playgroundTunable = !!catalogIn({ catalogs }, config.kernel)?.tuning;
  return (
    <>
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
          {tunable(catalogs).map((c) => (
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
    </>
  );
}

/** The data the hunt runs on: a generated source (or the form's tensor) and its seed. */
function DataFields() {
  const data = useApp((s) => s.tuner.form.data);
  const sources: DataSource[] = ['reference', 'random', 'synthetic'];
  return (
    <>
      <label className="tuner-field">
        <span>data</span>
        <select
          data-testid="tuner-data"
          value={data.source}
          onChange={(e) => act(setTunerData, { source: e.target.value as DataSource, seed: data.seed })}
        >
          {sources.map((d) => (
            <option key={d} value={d}>
              {DATA_LABEL[d].label}
            </option>
          ))}
          {data.tensor && <option value="tensor">tensor {excerpt(data.tensor.tensor)}</option>}
        </select>
      </label>
      <NumberField
        id="tuner:data:seed"
        label="data seed"
        value={data.seed}
        spec={{ label: 'data seed', min: 0, max: 0xffffffff }}
        onCommit={(v) => act(setTunerData, { ...data, seed: v })}
        testId="tuner-data-seed"
        className="tuner-field"
      />
    </>
  );
}

/** The form's fields: the family, its shape and routing controls, the data, the search's parameters. */
function FormFields({ catalog }: { catalog: FamilyCatalog }) {
  const evo = useApp((s) => s.tuner.form.evo);
  return (
    <div className="tuner-form">
      <FamilyField />
      {catalog.controls
        .filter((c) => c.group !== 'tile')
        .map((c) => (
          <FormParam key={c.key} control={c} catalog={catalog} />
        ))}
      <DataFields />
      {EVO_FIELDS.map((f) => (
        <NumberField
          key={f.key}
          id={`tuner:evo:${f.key}`}
          label={f.label}
          value={evo[f.key]}
          spec={{ label: f.label, min: f.min, max: f.max }}
          hint={f.hint}
          onCommit={(v) => act(setTunerEvo, f.key, v)}
          testId={`tuner-${f.key}`}
          className="tuner-field"
        />
      ))}
    </div>
  );
}

/** Hunt, re-hunt, cancel, autokernel: each enabled when it can act. */
function HuntButtons({ busy, blocked, running }: { busy: boolean; blocked: boolean; running: boolean }) {
  const { controller } = useServices();
  return (
    <div className="tuner-buttons">
      <button
        type="button"
        data-testid="tuner-hunt"
        disabled={busy || blocked}
        title="replay the stored winner for this device and problem, or hunt"
        onClick={() => controller.tuner.hunt(false)}
      >
        hunt
      </button>
      <button
        type="button"
        data-testid="tuner-rehunt"
        disabled={busy || blocked}
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
        disabled={busy || blocked}
        title="dispatch the stored winner (or the incumbent)"
        onClick={() => controller.tuner.autokernel()}
      >
        autokernel
      </button>
    </div>
  );
}

/** Why the form cannot hunt now, first reason first (not while it is busy). */
function Blockers({ blockers, busy }: { blockers: string[]; busy: boolean }) {
  if (!blockers.length || busy) return null;
  return (
    <ul className="tuner-blockers" data-testid="tuner-blockers">
      {blockers.map((b) => (
        <li key={b}>{b}</li>
      ))}
    </ul>
  );
}

/** The hunt form, its buttons and its blockers. */
export function TunerForm() {
  const form = useApp((s) => s.tuner.form);
  const catalog = useApp((s) => catalogIn(s, s.tuner.form.kernel));
  const blockers = useApp(tunerBlockers);
  const running = useApp((s) => s.tuner.hunt?.status === 'running');
  const autoRunning = useApp((s) => s.tuner.auto?.status === 'running');
  const busy = running || autoRunning;
  if (!catalog) return <p className="tuner-note">no family here declares a tuning search</p>;
  return (
    <>
      <FormFields catalog={catalog} />
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
      <HuntButtons busy={busy} blocked={blockers.length > 0} running={running} />
      <Blockers blockers={blockers} busy={busy} />
    </>
  );
}
