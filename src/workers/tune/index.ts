// The worker's 'tune' / 'autokernel' handler, and its 'pick' / 'model-run' requests. The problem sessions and the plan evaluator it runs are
// src/kernels/tune/session.ts (the bench runs them too).
export { entryOf, handleTuneRequest, type TuneHandlerContext, type TuneWorkerRequest } from './handler';
export { pickGemm, PICK_L2_BYTES, servePick, type PickContext, type PickWorkerRequest } from './pick';
