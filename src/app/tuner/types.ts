// The dashboard's contract with whoever mounts it: it asks for hunts and autokernel dispatches through
// these functions (the app wires them to the GPU worker's 'tune' / 'autokernel' messages) and never
// talks to the worker itself.
import type { CoopmatStaging, TileParams } from '../../kernels/family';
import type { EvolutionParams, TuneOp, WorkerRequest, WorkerResponse } from '../../workers/protocol';
import type { TuneRunStore } from '../persistence/tuneRuns';

/** The 'tune' request minus `type` and `id` (the worker client assigns the id). */
export type TuneRunRequest = Omit<Extract<WorkerRequest, { type: 'tune' }>, 'type' | 'id'>;

/** The 'autokernel' request minus `type` and `id`. */
export type AutokernelRunRequest = Omit<Extract<WorkerRequest, { type: 'autokernel' }>, 'type' | 'id'>;

/** The payload of the worker's `T` message: the message minus `type` and `id`. */
type ResponsePayload<T extends WorkerResponse['type']> = Omit<
  Extract<WorkerResponse, { type: T }>,
  'type' | 'id'
>;

/** A 'tune-progress' message's payload. */
export type TuneProgress = ResponsePayload<'tune-progress'>;

/** A 'tune-done' message's payload. */
export type TuneRunResult = ResponsePayload<'tune-done'>;

/** An 'autokernel-result' message's payload. */
export type AutokernelRunResult = ResponsePayload<'autokernel-result'>;

export interface ProblemShape {
  m: number;
  n: number;
  k: number;
}

export interface TunerDashboardProps {
  /** The worker's device id ('ready' message); runs are keyed by it. */
  deviceId: string;
  /**
   * Post {type:'tune', id, ...req} to the worker, call `onProgress` for each 'tune-progress' of that id,
   * resolve with the 'tune-done' payload; reject with an Error on 'error' (its message is shown) and
   * on 'cancelled' (an Error named 'CancelledError' or any error is fine: the dashboard shows it).
   */
  runTune(req: TuneRunRequest, onProgress: (p: TuneProgress) => void): Promise<TuneRunResult>;
  /** Post {type:'cancel', id} for the hunt in flight. Absent: no cancel button. */
  cancelTune?(): void;
  /** Post {type:'autokernel', id, ...req} and resolve with the 'autokernel-result' payload. Absent: no button. */
  runAutokernel?(req: AutokernelRunRequest): Promise<AutokernelRunResult>;
  /** A table row or scatter point was clicked: load this tile (shape, and staging) into the playground. */
  onLoadTile(tile: TileParams, op: TuneOp, shape: ProblemShape, staging?: CoopmatStaging): void;
  /** Where runs are stored; defaults to IndexedDB (openTuneRuns()). Tests pass their own. */
  openStore?: () => Promise<TuneRunStore>;
  /** Initial form values (e.g. the playground's current shape). */
  initial?: Partial<{ op: TuneOp; shape: ProblemShape; evo: EvolutionParams }>;
  /** No device yet (or lost): the hunt buttons are disabled with this reason. */
  disabledReason?: string;
}
