// Model presets: the GEMMs of real models, built in or derived from an opened GGUF. Pure data.
export {
  MODEL_PRESETS,
  modelGemms,
  modelPreset,
  PREFILL_M,
  presetFromGgufMetadata,
  type ModelDims,
  type ModelGemm,
  type ModelPreset,
} from './presets';
