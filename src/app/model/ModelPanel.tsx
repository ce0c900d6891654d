// The Model tab: open a local GGUF (picker or drop; .gguf.gz is inflated by the worker), its tensors with
// a filter box -- name, type, shape, bytes, and the kernels that take each at the activation rows chosen
// (or the rows one needs, or why it cannot run it; "not taken by these kernels (Q8_0, Q4_K)" for other
// types) --, and the activation a tensor runs with. Choosing "run on <kernel>" makes the tensor the
// weight operand of that family's config. Names from the file are shown escaped.
import { Fragment, useMemo, useState } from 'react';
import type { FamilyCatalog } from '../../kernels/family';
import type { TensorListing } from '../../kernels/tensors';
import type { OpenedModel } from '../../workers/protocol';
import { excerpt, safeText } from '../../kernels/quant/untrustedText';
import { useServices } from '../appContext';
import { NumberField } from '../components/NumberField';
import { ModelGemmsSection } from './ModelGemmsSection';
import { OpenModelButton } from './OpenModelButton';
import { bytesText, tensorMatches } from './tensorFilter';
import {
  act,
  catalogIn,
  modelFileKey,
  modelFileLabels,
  setActivation,
  setDataSeed,
  setModelFilter,
  setModelRows,
  tensorOffers,
  useApp,
  type TensorOffer,
} from '../store';

const SHOWN = 400;

/** Opening a file, and which opened file the table lists when there are several. */
function FileToolbar({
  files,
  file,
  labels,
  onPick,
}: {
  files: readonly OpenedModel[];
  file: OpenedModel | undefined;
  labels: string[];
  onPick: (key: string) => void;
}) {
  return (
    <div className="toolbar">
      <OpenModelButton label="Open a .gguf…" testId="model-open" inputTestId="model-file-input" />
      <span className="muted small">or drop one (.gguf, .gguf.gz) anywhere on the page</span>
      {files.length > 1 && (
        <select
          aria-label="opened file"
          data-testid="model-file-select"
          value={file ? modelFileKey(file.file) : ''}
          onChange={(e) => onPick(e.target.value)}
        >
          {files.map((f, i) => (
            <option key={modelFileKey(f.file)} value={modelFileKey(f.file)}>
              {labels[i]}
            </option>
          ))}
        </select>
      )}
    </div>
  );
}

/** The opened file's line: its size, version, tensors, what was read, its header hash and its preset. */
function FileHead({ file, label }: { file: OpenedModel; label: string | undefined }) {
  return (
    <p className="small" data-testid="model-file">
      <strong>{label}</strong> · {bytesText(file.file.size)} · GGUF v{file.version} · {file.tensors.length}{' '}
      tensors · {bytesText(file.bytesRead)} read to open it · header {file.file.headerHash}
      {file.preset ? (
        <> · presets: {file.preset.gemms.length} GEMMs (shape controls)</>
      ) : file.presetProblem ? (
        <span className="muted"> · no model preset: {safeText(file.presetProblem)}</span>
      ) : null}
    </p>
  );
}

/** The activation a tensor runs with: its rows, its distribution and its seed. */
function ActivationFields({ rows, activation, seed }: { rows: number; activation: string; seed: number }) {
  return (
    <div className="grid3 model-data">
      <NumberField
        id="model:rows"
        label="activation rows"
        value={rows}
        spec={{ label: 'activation rows', min: 1, max: 1 << 20 }}
        hint="rows of the generated activation (m, or the routed tokens of an expert bank)"
        onCommit={(v) => act(setModelRows, v)}
        testId="model-rows"
      />
      <label className="field">
        <span>activation</span>
        <select
          data-testid="model-activation"
          value={activation}
          onChange={(e) => act(setActivation, e.target.value === 'outliers' ? 'outliers' : 'normal')}
        >
          <option value="normal">normal N(0, 1)</option>
          <option value="outliers">normal + outlier channels</option>
        </select>
      </label>
      <NumberField
        id="data:seed"
        label="data seed"
        value={seed}
        spec={{ label: 'data seed', min: 0, max: 0xffffffff }}
        hint="draws the activation"
        onCommit={(v) => act(setDataSeed, v)}
        testId="model-seed"
      />
    </div>
  );
}

/** A tensor's name with a break opportunity after each dot (long names wrap at their parts). */
function TensorName({ name }: { name: string }) {
  return (
    <td className="mono">
      {excerpt(name)
        .split('.')
        .map((part, i) => (
          <Fragment key={i}>
            {i > 0 && (
              <>
                .<wbr />
              </>
            )}
            {part}
          </Fragment>
        ))}
    </td>
  );
}

/** One family's offer for a tensor: "run on" it at the panel's rows, at the rows it needs, or why not. */
function TensorOfferLink({
  offer: k,
  tensor: t,
  catalog,
  panelRows,
  runOn,
}: {
  offer: TensorOffer;
  tensor: TensorListing;
  catalog: FamilyCatalog | undefined;
  panelRows: number;
  runOn: (catalog: FamilyCatalog, t: TensorListing, rows: number) => void;
}) {
  // Refused at the panel's rows: offered at the next rows it runs at, else not.
  const rows = k.problems.length ? k.runsAt : panelRows;
  const name = excerpt(t.name);
  return (
    <div className="takes">
      <button
        type="button"
        className="link"
        disabled={!catalog || rows === undefined}
        title={
          rows === undefined
            ? `${k.title} cannot run ${name}: ${safeText(k.problems.join('; '))}`
            : `run ${name} on ${k.title} with ${rows} activation rows`
        }
        onClick={() => {
          if (catalog && rows !== undefined) runOn(catalog, t, rows);
        }}
        data-testid={`run-on-${k.kernel}`}
        data-rows={rows}
      >
        {k.title}
        {k.problems.length && rows !== undefined ? ` at ${rows} rows` : ''}
      </button>
      {k.problems.length > 0 && (
        <small className="muted" data-testid={`offer-why-${k.kernel}`}>
          {' '}
          ({rows === undefined ? '' : `not at ${panelRows} rows: `}
          {safeText(k.problems.join('; '))})
        </small>
      )}
    </div>
  );
}

/** The tensors that pass the filter (the first SHOWN of them), each with the families that take it. */
function TensorTable({
  tensors,
  file,
  panelRows,
  offersOf,
}: {
  tensors: TensorListing[];
  file: OpenedModel;
  panelRows: number;
  offersOf: (t: TensorListing) => TensorOffer[];
}) {
  const { controller } = useServices();
  const catalogs = useApp((s) => s.catalogs);
  const current = useApp((s) => (s.config.data.source === 'tensor' ? s.config.data.tensor : undefined));
  const runOn = (catalog: FamilyCatalog, t: TensorListing, rows: number) => {
    if (rows !== panelRows) act(setModelRows, rows);
    controller.models.choose(catalog, file.file, t);
    // The verdict is what comes next: bring the results into view.
    document.querySelector('[data-testid="results"]')?.scrollIntoView({ block: 'nearest' });
  };
  return (
    <div className="table-wrap">
      <table className="tensors" data-testid="tensor-table">
        <thead>
          <tr>
            <th>tensor</th>
            <th>type</th>
            <th>shape</th>
            <th>bytes</th>
            <th>runs on</th>
          </tr>
        </thead>
        <tbody>
          {tensors.slice(0, SHOWN).map((t) => {
            const chosen =
              current?.tensor === t.name && modelFileKey(current.file) === modelFileKey(file.file);
            return (
              <tr key={t.name} data-testid="tensor-row" data-name={t.name} className={chosen ? 'chosen' : ''}>
                <TensorName name={t.name} />
                <td className="mono">{excerpt(t.typeName)}</td>
                <td className="num">{t.shape.join(' × ')}</td>
                <td className="num">{bytesText(t.bytes)}</td>
                <td>
                  {t.note && <span className="muted small">{safeText(t.note)}</span>}
                  {offersOf(t).map((k) => (
                    <TensorOfferLink
                      key={k.kernel}
                      offer={k}
                      tensor={t}
                      catalog={catalogIn({ catalogs }, k.kernel)}
                      panelRows={panelRows}
                      runOn={runOn}
                    />
                  ))}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {tensors.length > SHOWN && (
        <p className="muted small">{tensors.length - SHOWN} more: narrow the filter.</p>
      )}
    </div>
  );
}

export function ModelPanel() {
  const models = useApp((s) => s.models);
  const catalogs = useApp((s) => s.catalogs);
  const config = useApp((s) => s.config);
  const panel = useApp((s) => ({ rows: s.models.rows, activation: s.models.activation }));
  const device = useApp((s) => s.device);
  const seed = useApp((s) => s.config.data.seed);
  const [which, setWhich] = useState<string>();
  // Files are told apart by header hash and size: a file and a copy cut short share the header hash.
  const fileIndex = Math.max(
    0,
    models.files.findIndex((f) => modelFileKey(f.file) === which),
  );
  const file = models.files[fileIndex];
  const labels = modelFileLabels(models.files.map((f) => f.file));
  const tensors = (file?.tensors ?? []).filter((t) => tensorMatches(t, models.filter));
  // Each family's offer is validated as "run on" would load it (the panel's rows, the current tile),
  // once per tensor shown while those stay the same.
  const offersOf = useMemo(() => {
    const cache = new Map<TensorListing, TensorOffer[]>();
    return (t: TensorListing): TensorOffer[] => {
      if (!file) return [];
      let offers = cache.get(t);
      if (!offers)
        cache.set(t, (offers = tensorOffers({ catalogs, config, models: panel, device }, file.file, t)));
      return offers;
    };
  }, [catalogs, config, panel, device, file]);

  return (
    <div className="view model-view" data-testid="model-view">
      <FileToolbar files={models.files} file={file} labels={labels} onPick={setWhich} />
      {models.opening && <p className="muted">opening {models.opening}…</p>}
      {models.error && (
        <p className="run-error" role="alert" data-testid="model-error">
          Could not open {models.error}
        </p>
      )}
      <ModelGemmsSection />
      {!file ? (
        <p className="muted pad">
          Open a GGUF model file to run its Q8_0 and Q4_K tensors through the kernels. Only the header is read
          to list the tensors (files of any size, over 4 GiB too), and a tensor&apos;s bytes when you run it;
          nothing leaves your machine.
        </p>
      ) : (
        <>
          <FileHead file={file} label={labels[fileIndex]} />
          <ActivationFields rows={models.rows} activation={models.activation} seed={seed} />
          <input
            type="search"
            className="filter"
            placeholder="filter: name, type (q4_k), shape (4096x14336), bytes, kernel…"
            value={models.filter}
            onChange={(e) => act(setModelFilter, e.target.value)}
            data-testid="tensor-filter"
          />
          <TensorTable tensors={tensors} file={file} panelRows={models.rows} offersOf={offersOf} />
        </>
      )}
    </div>
  );
}
