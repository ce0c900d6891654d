// Model presets: the GEMMs of real models, built in or derived from an opened GGUF. Pure data.
export {
  fits,
  MODEL_PRESETS,
  modelGemms,
  modelPreset,
  PREFILL_M,
  type ModelDims,
  type ModelGemm,
  type ModelPreset,
} from './presets';
export { presetFromGgufMetadata } from './fromGguf';
export {
  listTensors,
  shapeParams,
  TAKEN_FORMATS,
  tensorConfig,
  weightShape,
  type GemmShape,
  type TensorListing,
  type WeightShape,
} from './tensors';
