// The tuner's GPU side: evaluators on a GPUDevice and the worker's 'tune' / 'autokernel' handler.
export {
  gateRows,
  onePass,
  ORACLE_MAC_BUDGET,
  TileEvaluator,
  type TileEvalSetup,
  type TilePlan,
} from './tileEval';
export {
  assertQ4kShape,
  pickRows,
  Q4kTileEval,
  q4kTileSetup,
  q4kTileProblem,
  weightBanks,
  type Q4kTileParts,
  type TileEvalOptions,
} from './q4kTileEval';
export { MmqQ4kEval, type MmqQ4kEvalOptions } from './mmqQ4kEval';
export { CoopmatF16Eval, defaultCoopmatArm, type CoopmatF16EvalOptions } from './coopmatF16Eval';
export {
  AUTOKERNEL_TIMING_ITERS,
  entryOf,
  evaluatorFor,
  handleTuneRequest,
  tuneHandler,
  type TuneHandlerContext,
  type TuneWorkerRequest,
} from './handler';
