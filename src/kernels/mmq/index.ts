// The MMQ kernel family's only public entry: the generator, host plans, oracles, data and families.
export {
  buildMmqKernel,
  mmqBindings,
  mmqGeometry,
  mmqSpecProblems,
  mmqWgsl,
  mmqWorkgroupBytes,
  type MmqDims,
  type MmqGeometry,
  type MmqKernel,
  type MmqSpec,
} from './mmq.wgsl';
export {
  blockOf,
  MMQ_ARMS,
  MMQ_BLK_TILE,
  MMQ_CATALOGS,
  MMQ_PRESETS,
  type MmqAccumulator,
  type MmqKernelId,
  type MmqOperands,
  type MmqWeights,
} from './catalog';
export {
  buildMmqPlan,
  interleaveF32,
  mmqAnalyticOwnership,
  mmqDimsData,
  mmqInputBuffers,
  mmqPass,
  mmqShapeProblems,
  mmqTileOwner,
  OWNER_BUFFER,
  type MmqPlanOptions,
} from './mmq.plan';
export {
  dequantizeActivation,
  gemmF32,
  mmqQ4kElement,
  mmqQ4kIdRef,
  mmqQ4kRef,
  mmqQ8Element,
  mmqQ4kPartials,
  mmqQ8IdRef,
  mmqQ8Partials,
  mmqQ8Ref,
  q4kNibbles,
} from './mmq.oracle';
export {
  activationRows,
  fullPrecisionOf,
  MMQ_RANDOM_SEED,
  mmqDataset,
  mmqTensorDataset,
  mmqWeightBytes,
  type MmqDataset,
  type MmqInputs,
} from './mmq.data';
export {
  INT8_TUNE_GATE,
  mmqFamilies,
  mmqOracle,
  mmqOwnership,
  mmqPartials,
  mmqPhases,
  mmqPresetSpec,
  type MmqPresetOptions,
} from './mmq.family';
