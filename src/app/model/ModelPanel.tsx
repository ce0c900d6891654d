// The Model tab: open a local GGUF (picker or drop; .gguf.gz is inflated by the worker), its tensors with
// a filter box -- name, type, shape, bytes, and the kernels that take each at the activation rows chosen
// (or the rows one needs, or why it cannot run it; "not taken by these kernels (Q8_0, Q4_K)" for other
// types) --, and the activation a tensor runs with. Choosing "run on <kernel>" makes the tensor the
// weight operand of that family's config. Names from the file are shown escaped.
import { Fragment, useMemo, useState } from 'react';
import type { TensorListing } from '../../kernels/tensors';
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

export function ModelPanel() {
  const { controller } = useServices();
  const models = useApp((s) => s.models);
  const catalogs = useApp((s) => s.catalogs);
  const config = useApp((s) => s.config);
  const panel = useApp((s) => ({ rows: s.models.rows, activation: s.models.activation }));
  const device = useApp((s) => s.device);
  const current = useApp((s) => (s.config.data.source === 'tensor' ? s.config.data.tensor : undefined));
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
      <div className="toolbar">
        <OpenModelButton label="Open a .gguf…" testId="model-open" inputTestId="model-file-input" />
        <span className="muted small">or drop one (.gguf, .gguf.gz) anywhere on the page</span>
        {models.files.length > 1 && (
          <select
            aria-label="opened file"
            data-testid="model-file-select"
            value={file ? modelFileKey(file.file) : ''}
            onChange={(e) => setWhich(e.target.value)}
          >
            {models.files.map((f, i) => (
              <option key={modelFileKey(f.file)} value={modelFileKey(f.file)}>
                {labels[i]}
              </option>
            ))}
          </select>
        )}
      </div>
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
          <p className="small" data-testid="model-file">
            <strong>{labels[fileIndex]}</strong> · {bytesText(file.file.size)} · GGUF v{file.version} ·{' '}
            {file.tensors.length} tensors · {bytesText(file.bytesRead)} read to open it · header{' '}
            {file.file.headerHash}
            {file.preset ? (
              <> · presets: {file.preset.gemms.length} GEMMs (shape controls)</>
            ) : file.presetProblem ? (
              <span className="muted"> · no model preset: {safeText(file.presetProblem)}</span>
            ) : null}
          </p>
          <div className="grid3 model-data">
            <NumberField
              id="model:rows"
              label="activation rows"
              value={models.rows}
              spec={{ label: 'activation rows', min: 1, max: 1 << 20 }}
              hint="rows of the generated activation (m, or the routed tokens of an expert bank)"
              onCommit={(v) => act(setModelRows, v)}
              testId="model-rows"
            />
            <label className="field">
              <span>activation</span>
              <select
                data-testid="model-activation"
                value={models.activation}
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
          <input
            type="search"
            className="filter"
            placeholder="filter: name, type (q4_k), shape (4096x14336), bytes, kernel…"
            value={models.filter}
            onChange={(e) => act(setModelFilter, e.target.value)}
            data-testid="tensor-filter"
          />
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
                    <tr
                      key={t.name}
                      data-testid="tensor-row"
                      data-name={t.name}
                      className={chosen ? 'chosen' : ''}
                    >
                      <td className="mono">
                        {excerpt(t.name)
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
                      <td className="mono">{excerpt(t.typeName)}</td>
                      <td className="num">{t.shape.join(' × ')}</td>
                      <td className="num">{bytesText(t.bytes)}</td>
                      <td>
                        {t.note && <span className="muted small">{safeText(t.note)}</span>}
                        {offersOf(t).map((k) => {
                          const catalog = catalogIn({ catalogs }, k.kernel);
                          // Refused at the panel's rows: offered at the next rows it runs at, else not.
                          const rows = k.problems.length ? k.runsAt : models.rows;
                          const name = excerpt(t.name);
                          return (
                            <div key={k.kernel} className="takes">
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
                                  if (!catalog || rows === undefined) return;
                                  if (rows !== models.rows) act(setModelRows, rows);
                                  controller.models.choose(catalog, file.file, t);
                                  // The verdict is what comes next: bring the results into view.
                                  document
                                    .querySelector('[data-testid="results"]')
                                    ?.scrollIntoView({ block: 'nearest' });
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
                                  ({rows === undefined ? '' : `not at ${models.rows} rows: `}
                                  {safeText(k.problems.join('; '))})
                                </small>
                              )}
                            </div>
                          );
                        })}
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
        </>
      )}
    </div>
  );
}
