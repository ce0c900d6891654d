// The tuner's GPU side: evaluators on a GPUDevice and the worker's 'tune' / 'autokernel' handler.
export { gateRows, ORACLE_MAC_BUDGET, TileEvaluator, type TileEvalSetup, type TileKernel } from './tileEval';
export {
  MmqQ4kEval,
  weightBanks,
  assertQ4kShape,
  type MmqQ4kEvalOptions,
  type TileEvalOptions,
} from './mmqQ4kEval';
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
