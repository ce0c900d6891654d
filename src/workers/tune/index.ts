// The worker's 'tune' / 'autokernel' handler. The problem sessions and the plan evaluator it runs are
// src/kernels/tune/session.ts (the bench runs them too).
export { entryOf, handleTuneRequest, type TuneHandlerContext, type TuneWorkerRequest } from './handler';
