// Fragment ownership: who stores each output element, coloured by plane (hue) and lane (shade), for the
// ownership recorded by the instrumented run or for an analytic phase of the kernel. Elements the run
// stored never or twice are flagged; hover names (row, col) -> (workgroup, plane, lane, element).
import { useMemo, useState } from 'react';
import type { OwnershipPhase } from '../../kernels/family';
import type { OwnershipBuffers } from '../../workers/protocol';
import { PLANE_CHOICES } from '../permalink/codec';
import {
  act,
  effectivePlane,
  selectElement,
  setOwnershipSource,
  setPlane,
  useApp,
  type OwnershipSource,
} from '../store';
import { laneElementIndex, lanesOf, ownerColor, ownershipDiff, ownershipFlags, type Rgb } from './analysis';
import { GridCanvas } from './GridCanvas';
import { gridWindow, ownerRegion, ownershipColor, ownershipMarks } from './gridDraw';
import { ElementInspector } from './ElementInspector';
import { canvasPx, useContentWidth } from './useContentWidth';
import { useRunAnalysis, type RunAnalysis } from './useRunAnalysis';

export const PHASE_LABEL: Record<OwnershipPhase, string> = {
  'fragment-store': 'cmma fragment store',
  'scalar-epilogue': 'scalar epilogue (per = 256/plane)',
  'register-accumulator': 'register accumulator (rm×rn subtiles)',
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

const SOURCE_LABEL = (s: OwnershipSource) =>
  s === 'recorded' ? 'recorded (instrumented run)' : `analytic: ${PHASE_LABEL[s]}`;

function PlaneLegend({ map, lanes }: { map: OwnershipBuffers; lanes: number }) {
  const planes = useMemo(() => [...new Set(map.plane)].sort((a, b) => a - b), [map]);
  const css = (c: Rgb) => `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
  const laneStops = Array.from({ length: 8 }, (_, i) =>
    css(ownerColor(planes[0] ?? 0, Math.round((i / 7) * (lanes - 1)), lanes)),
  ).join(', ');
  return (
    <div className="legend" data-testid="ownership-legend">
      <span className="muted">planes</span>
      {planes.slice(0, 16).map((p) => (
        <span
          key={p}
          className="swatch"
          style={{ background: css(ownerColor(p, Math.floor(lanes / 2), lanes)) }}
          title={`plane ${p}`}
        >
          {p}
        </span>
      ))}
      {planes.length > 16 && <span className="muted">+{planes.length - 16}</span>}
      <span className="muted">lane 0</span>
      <span className="gradient" style={{ background: `linear-gradient(90deg, ${laneStops})` }} />
      <span className="muted">lane {lanes - 1}</span>
      <span className="swatch flag never">✕</span>
      <span className="muted">never stored</span>
      <span className="swatch flag twice">●</span>
      <span className="muted">stored twice</span>
    </div>
  );
}

/** The view's controls: which ownership, the plane width and the tile zoom. */
function OwnershipToolbar(p: { sources: OwnershipSource[]; zoom: boolean; onZoom: (zoom: boolean) => void }) {
  const source = useApp((s) => s.ownershipSource);
  const selected = useApp((s) => s.selected);
  const planeChoice = useApp((s) => s.config.plane);
  const adapterPlane = useApp((s) => s.device.plane);
  return (
    <div className="toolbar">
      <label className="field inline">
        <span>ownership</span>
        <select
          data-testid="ownership-source"
          value={source}
          onChange={(e) => act(setOwnershipSource, e.target.value as OwnershipSource)}
        >
          {p.sources.map((s) => (
            <option key={s} value={s}>
              {SOURCE_LABEL(s)}
            </option>
          ))}
        </select>
      </label>
      <label className="field inline">
        <span>plane width</span>
        <select
          data-testid="view-plane-select"
          value={planeChoice ?? ''}
          onChange={(e) => act(setPlane, e.target.value === '' ? undefined : Number(e.target.value))}
        >
          <option value="">adapter ({adapterPlane ?? 'unknown'})</option>
          {PLANE_CHOICES.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
      <label className="check">
        <input
          type="checkbox"
          checked={p.zoom}
          onChange={(e) => p.onZoom(e.target.checked)}
          data-testid="zoom-tile"
        />
        <span>zoom to {selected !== undefined ? 'the selected element’s' : 'the first'} tile</span>
      </label>
    </div>
  );
}

/** The output's size and tiling, the never/twice-stored counts, and the recorded-vs-analytic diffs. */
function OwnershipStats(p: {
  a: RunAnalysis;
  map: OwnershipBuffers | undefined;
  lanes: number;
  flags: { never: number; twice: number } | undefined;
}) {
  const { a, map, lanes, flags } = p;
  const rec = a.outcome.ownership;
  const diffs = rec
    ? (Object.entries(a.outcome.analyticOwnership ?? {}) as [OwnershipPhase, OwnershipBuffers][])
        .filter(([phase]) => !a.opaque.includes(phase))
        .map(([phase, m]) => [phase, ownershipDiff(rec, m)] as const)
    : [];
  return (
    <>
      <p className="stats" data-testid="ownership-stats">
        {a.outcome.rows}×{a.outcome.cols} output · tile {a.geometry.tileRows}×{a.geometry.tileCols} ·{' '}
        {plural(map ? new Set(map.workgroup).size : 0, 'workgroup')} · {plural(lanes, 'lane')} per plane
        {flags && (
          <>
            {' · '}
            <span className={flags.never ? 'bad' : 'good'} data-testid="never-count">
              {flags.never} never stored
            </span>
            {' · '}
            <span className={flags.twice ? 'bad' : 'good'} data-testid="twice-count">
              {flags.twice} stored twice
            </span>
          </>
        )}
      </p>
      {diffs.length > 0 && (
        <ul className="stats diff-list" data-testid="ownership-diff">
          {diffs.map(([phase, n]) => (
            <li key={phase} className={n ? 'bad' : 'good'}>
              {n
                ? `The recorded ownership differs from the analytic ${PHASE_LABEL[phase]} at ${plural(n, 'element')}.`
                : `The recorded ownership equals the analytic ${PHASE_LABEL[phase]}.`}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** What hovering an element shows, and what the keyboard's highlight announces. */
function ownerDescriber(
  rows: number,
  cols: number,
  map: OwnershipBuffers | undefined,
  laneIdx: ReturnType<typeof laneElementIndex> | undefined,
) {
  return (c: { row: number; col: number }) => {
    if (c.row >= rows || c.col >= cols)
      return `(${c.row}, ${c.col}) is outside the ${rows}×${cols} output (tail of the edge tile)`;
    const i = c.row * cols + c.col;
    return map && laneIdx
      ? `(${c.row}, ${c.col}) → workgroup ${map.workgroup[i]}, plane ${map.plane[i]}, lane ${map.lane[i]}, element #${laneIdx[i]} of its lane · stored ${map.count[i]}×`
      : `(${c.row}, ${c.col})`;
  };
}

/** Why a subgroup-matrix arm has no analytic owner. */
function OpaqueNotice() {
  return (
    <p className="notice">
      The subgroup-matrix fragment layout is opaque: WGSL (like SPIR-V) exposes no per-lane map of a matrix
      fragment, so there is no analytic owner. The recorded ownership shows who stored each element after the
      spill.
    </p>
  );
}

export function OwnershipView() {
  const outcome = useApp((s) => s.outcome);
  const source = useApp((s) => s.ownershipSource);
  const selected = useApp((s) => s.selected);
  const plane = useApp((s) => effectivePlane(s) ?? 32);
  const a = useRunAnalysis(outcome);
  const [viewRef, viewWidth] = useContentWidth();
  const [hover, setHover] = useState<{ row: number; col: number }>();
  const [zoom, setZoom] = useState(false);

  const map = a
    ? source === 'recorded'
      ? a.outcome.ownership
      : a.outcome.analyticOwnership?.[source]
    : undefined;
  const opaque = !!a && source !== 'recorded' && a.opaque.includes(source);
  const lanes = map ? lanesOf(map, a?.outcome.config.plane ?? plane) : plane;
  const laneIdx = useMemo(() => (map ? laneElementIndex(map) : undefined), [map]);
  const flags = useMemo(
    () => (map && source === 'recorded' ? ownershipFlags(map) : undefined),
    [map, source],
  );
  const marks = useMemo(
    () => (map && source === 'recorded' ? ownershipMarks(map) : undefined),
    [map, source],
  );
  const color = useMemo(() => ownershipColor(map, opaque, lanes), [map, opaque, lanes]);
  const region = useMemo(() => ownerRegion(map), [map]);

  if (!a) return <p className="muted pad">Run a kernel to see who owns each output element.</p>;
  const sources: OwnershipSource[] = [
    ...(a.outcome.ownership ? (['recorded'] as const) : []),
    ...(Object.keys(a.outcome.analyticOwnership ?? {}) as OwnershipPhase[]),
  ];
  const view = gridWindow(a.geometry, a.outcome.cols, zoom ? (selected ?? 0) : undefined);
  const cols = a.outcome.cols;
  const describe = ownerDescriber(a.outcome.rows, cols, map, laneIdx);

  return (
    <div className="view ownership-view" data-testid="ownership-view" ref={viewRef}>
      <OwnershipToolbar sources={sources} zoom={zoom} onZoom={setZoom} />
      <OwnershipStats a={a} map={map} lanes={lanes} flags={flags} />
      {opaque && <OpaqueNotice />}
      {map && (
        <>
          <div className="canvas-box">
            <GridCanvas
              rows={a.outcome.rows}
              cols={cols}
              view={view}
              tileRows={a.geometry.tileRows}
              tileCols={a.geometry.tileCols}
              color={color}
              region={opaque ? undefined : region}
              marks={marks}
              selected={selected}
              onHover={setHover}
              onPick={(c) => act(selectElement, c.row * cols + c.col)}
              describe={describe}
              maxPx={canvasPx(viewWidth)}
              testId="ownership-canvas"
              label="ownership grid"
            />
          </div>
          <p className="hover-info" data-testid="ownership-hover">
            {hover ? describe(hover) : 'hover an element: (row, col) → (workgroup, plane, lane, element)'}
          </p>
          <PlaneLegend map={map} lanes={lanes} />
        </>
      )}
      <ElementInspector analysis={a} />
    </div>
  );
}
