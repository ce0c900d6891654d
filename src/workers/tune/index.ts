// The tuner's GPU side: the plan evaluator and the worker's 'tune' / 'autokernel' handler.
export {
  PlanEvaluator,
  ProblemSession,
  searchOf,
  type PlanEvaluatorOptions,
  type SessionRun,
} from './evaluator';
export { entryOf, handleTuneRequest, type TuneHandlerContext, type TuneWorkerRequest } from './handler';
