// The derived data both views draw, computed once per run result (memoized on the outcome object).
import { useMemo } from 'react';
import type { OwnershipPhase } from '../../kernels/family';
import type { OwnershipBuffers, RunOutcome } from '../../workers/protocol';
import {
  badByOwner,
  badMask,
  errorField,
  errorSplit,
  tileGeometry,
  type BadSummary,
  type ErrorSplit,
  type TileGeometry,
} from './analysis';

export interface RunAnalysis {
  outcome: RunOutcome;
  /** |gpu - oracle| / max|oracle|. */
  kernelError: Float32Array;
  /** |oracle - f32| / max|f32| and |gpu - f32| / max|f32|, when a full-precision reference exists. */
  quantError?: Float32Array;
  totalError?: Float32Array;
  bad: Uint8Array;
  /** Ownership the overlay and the "bad by lane" summary use: recorded, else the first known analytic phase. */
  owner?: OwnershipBuffers;
  ownerLabel: string;
  badSummary: BadSummary;
  split?: ErrorSplit;
  geometry: TileGeometry;
  /** Analytic phases whose map is unknown (all zero): the opaque matrix fragment. */
  opaque: OwnershipPhase[];
}

const isOpaque = (m: OwnershipBuffers) => m.count.every((c) => c === 0);

/** Analyse a run result for the views. */
export function analyseRun(outcome: RunOutcome): RunAnalysis {
  const kernelError = errorField(outcome.output, outcome.oracle);
  const bad = badMask(outcome.output, outcome.oracle, kernelError, outcome.verdict.gate);
  const phases = Object.entries(outcome.analyticOwnership ?? {}) as [OwnershipPhase, OwnershipBuffers][];
  const opaque = phases.filter(([, m]) => isOpaque(m)).map(([p]) => p);
  const known = phases.find(([, m]) => !isOpaque(m));
  const owner = outcome.ownership ?? known?.[1];
  const ownerLabel = outcome.ownership ? 'recorded' : known ? `analytic ${known[0]}` : 'none';
  const geomSource = known?.[1] ?? outcome.ownership;
  const t = outcome.outputTile;
  const geometry = t
    ? {
        tileRows: t.rows,
        tileCols: t.cols,
        paddedRows: Math.ceil(outcome.rows / t.rows) * t.rows,
        paddedCols: Math.ceil(outcome.cols / t.cols) * t.cols,
      }
    : geomSource
      ? tileGeometry(geomSource)
      : {
          tileRows: outcome.rows,
          tileCols: outcome.cols,
          paddedRows: outcome.rows,
          paddedCols: outcome.cols,
        };
  const a: RunAnalysis = {
    outcome,
    kernelError,
    bad,
    ownerLabel,
    badSummary: badByOwner(bad, owner),
    geometry,
    opaque,
  };
  if (owner) a.owner = owner;
  if (outcome.fullPrecision) {
    a.quantError = errorField(outcome.oracle, outcome.fullPrecision);
    a.totalError = errorField(outcome.output, outcome.fullPrecision);
    a.split = errorSplit(outcome.output, outcome.oracle, outcome.fullPrecision);
  }
  return a;
}

/** The analysis of the current outcome (undefined before any run). */
export function useRunAnalysis(outcome: RunOutcome | undefined): RunAnalysis | undefined {
  return useMemo(() => (outcome ? analyseRun(outcome) : undefined), [outcome]);
}
