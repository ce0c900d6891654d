// The A/B tab: pin a run as A, and the next run (another config, arm, or an edited kernel) is B. Time
// with its spread and the ratio, the error heatmaps side by side with their difference, the elements
// whose owner changed, and the WGSL diff (Monaco's diff editor, loaded on demand).
import { lazy, Suspense, useCallback, useMemo } from 'react';
import { knobLabel } from '../../kernels/family';
import type { RunOutcome } from '../../workers/protocol';
import { useServices } from '../appContext';
import {
  act,
  catalogIn,
  clearAb,
  loadAbSide,
  pinCurrentRun,
  swapAb,
  useApp,
  type AbSide,
  type AbState,
} from '../store';
import { abTiming, deltaColor, errorDelta, ownerChanges, ratioText, type BatchStats } from './abCompare';
import { errorField, fmt, logPosition, rampColor, type Rgb } from './analysis';
import { GridCanvas } from './GridCanvas';
import './perf.css';

const WgslDiff = lazy(() => import('../editor/WgslDiff'));

const MAP_PX = 170;

function useSideLabel(side: AbSide | undefined): string {
  const catalog = useApp((s) => (side ? catalogIn(s, side.config.kernel) : undefined));
  if (!side) return '–';
  const c = side.config;
  const shape = (catalog?.controls ?? [])
    .filter((control) => control.group === 'shape')
    .map((control) => `${control.key}=${String(c.params[control.key])}`)
    .join(' ');
  const knobs = catalog ? knobLabel(catalog, c.params) : '-';
  return `${catalog?.title ?? c.kernel} · ${c.arm}${knobs !== '-' ? ` · ${knobs}` : ''} · ${shape}${side.edited ? ' · edited WGSL' : ''}`;
}

function Map({
  o,
  color,
  label,
  testId,
}: {
  o: RunOutcome;
  color: (i: number) => Rgb;
  label: string;
  testId: string;
}) {
  return (
    <figure className="ab-map">
      <GridCanvas
        rows={o.rows}
        cols={o.cols}
        view={{ r0: 0, c0: 0, rows: o.rows, cols: o.cols }}
        tileRows={o.outputTile?.rows ?? o.rows}
        tileCols={o.outputTile?.cols ?? o.cols}
        color={color}
        maxPx={MAP_PX}
        testId={testId}
        label={label}
      />
      <figcaption>{label}</figcaption>
    </figure>
  );
}

const statsCells = (s: BatchStats) => (
  <>
    <td className="num">{fmt(s.min, 4)}</td>
    <td className="num">{fmt(s.median, 4)}</td>
    <td className="num">{s.n}</td>
  </>
);

function Timing({ a, b }: { a: RunOutcome; b: RunOutcome }) {
  const t = abTiming(a.timing, b.timing);
  if (!t) return <p className="muted small">Time both runs (the Timed option) to compare their speed.</p>;
  return (
    <>
      <table className="ab-time" data-testid="ab-time">
        <thead>
          <tr>
            <th />
            <th>min ms</th>
            <th>median ms</th>
            <th>batches</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <th>A</th>
            {statsCells(t.a)}
          </tr>
          <tr>
            <th>B</th>
            {statsCells(t.b)}
          </tr>
          <tr>
            <th>B/A</th>
            <td className="num">{t.ratioMin.toFixed(3)}×</td>
            <td className="num">{t.ratioMedian.toFixed(3)}×</td>
            <td />
          </tr>
        </tbody>
      </table>
      <p className="ab-ratio" data-testid="ab-ratio">
        {ratioText(t)}
      </p>
    </>
  );
}

function Compare({ a, b }: { a: RunOutcome; b: RunOutcome }) {
  const errA = useMemo(() => errorField(a.output, a.oracle), [a]);
  const errB = useMemo(() => errorField(b.output, b.oracle), [b]);
  const delta = useMemo(() => errorDelta(errA, errB), [errA, errB]);
  const owners = useMemo(
    () => (a.ownership && b.ownership ? ownerChanges(a.ownership, b.ownership) : undefined),
    [a, b],
  );
  const heat = useCallback((e: Float32Array) => (i: number) => rampColor(logPosition(e[i]!)), []);
  const changedColor = useCallback(
    (i: number): Rgb => (owners?.mask[i] ? [255, 190, 60] : [24, 30, 40]),
    [owners],
  );
  return (
    <>
      <h4>Error (|GPU − oracle| / max|oracle|, log scale)</h4>
      <div className="ab-maps" data-testid="ab-error-maps">
        <Map o={a} color={heat(errA)} label="A" testId="ab-map-a" />
        <Map o={b} color={heat(errB)} label="B" testId="ab-map-b" />
        {delta ? (
          <Map
            o={b}
            color={(i) => deltaColor(delta[i]!)}
            label="B − A (red: B worse)"
            testId="ab-map-delta"
          />
        ) : (
          <p className="muted small">The outputs differ in size: no difference map.</p>
        )}
      </div>
      <h4>Ownership</h4>
      {owners ? (
        <div className="ab-maps">
          <Map o={b} color={changedColor} label="owner changed" testId="ab-map-owners" />
          <p data-testid="ab-owner-diff">
            {owners.changed === 0
              ? 'Every element has the same owner (workgroup, plane, lane) in A and B.'
              : `${owners.changed} of ${b.rows * b.cols} elements changed owner (workgroup, plane or lane).`}
          </p>
        </div>
      ) : (
        <p className="muted small" data-testid="ab-owner-diff">
          {a.ownership && b.ownership
            ? 'The outputs differ in size: ownership is not comparable.'
            : 'Record ownership in both runs (the Ownership option) to compare owners.'}
        </p>
      )}
    </>
  );
}

/** A and B, each by its label; a side from a link that was not run here can be loaded and run. */
function AbSides({ ab }: { ab: AbState }) {
  const { controller } = useServices();
  const labelA = useSideLabel(ab.a);
  const labelB = useSideLabel(ab.b);
  return (
    <dl className="ab-sides" data-testid="ab-sides">
      {(['a', 'b'] as const).map((name) => {
        const side = ab[name];
        return (
          <div key={name} className="ab-side">
            <dt>{name.toUpperCase()}</dt>
            <dd data-testid={`ab-side-${name}`}>
              {name === 'a' ? labelA : labelB}
              {side && !side.outcome && (
                <>
                  {' '}
                  <span className="muted">(from the link, not run here)</span>{' '}
                  <button
                    type="button"
                    className="link"
                    title="Load this config (and its edited WGSL, shown below) into the playground and run it"
                    onClick={() => {
                      act(loadAbSide, name);
                      controller.runNow();
                    }}
                    data-testid={`ab-load-${name}`}
                  >
                    load and run it
                  </button>
                </>
              )}
              {!side && <span className="muted">the next run</span>}
            </dd>
          </div>
        );
      })}
    </dl>
  );
}

export default function AbView() {
  const ab = useApp((s) => s.ab);
  const hasRun = useApp((s) => !!s.outcome);
  return (
    <div className="view ab-view" data-testid="ab-view">
      <div className="toolbar">
        <button type="button" disabled={!hasRun} onClick={() => act(pinCurrentRun)} data-testid="ab-pin">
          Pin the current run as A
        </button>
        <button type="button" disabled={!ab.b} onClick={() => act(swapAb)} data-testid="ab-swap">
          B becomes A
        </button>
        <button type="button" disabled={!ab.a} onClick={() => act(clearAb)} data-testid="ab-clear">
          Clear
        </button>
      </div>
      {!ab.a ? (
        <p className="muted pad">
          Pin a run as A, then change the config, the arm or the kernel text: the next run is B, shown here
          beside A.
        </p>
      ) : (
        <>
          <AbSides ab={ab} />
          {ab.a.outcome && ab.b?.outcome && (
            <>
              <Timing a={ab.a.outcome} b={ab.b.outcome} />
              <Compare a={ab.a.outcome} b={ab.b.outcome} />
            </>
          )}
          {ab.b && (
            <>
              <h4>WGSL of the main pass: A → B</h4>
              {ab.a.wgsl !== undefined && ab.b.wgsl !== undefined ? (
                <Suspense fallback={<p className="muted small">loading the diff editor…</p>}>
                  <WgslDiff original={ab.a.wgsl} modified={ab.b.wgsl} />
                </Suspense>
              ) : (
                <p className="muted small">
                  A side restored from a link with its generated kernel has no text until it is run here.
                </p>
              )}
            </>
          )}
        </>
      )}
    </div>
  );
}
