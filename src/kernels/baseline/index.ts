// The f32 baseline GEMM's only public entry: generator, plan, oracles (the bench's ratio (a)).
export {
  buildGemmF32Kernel,
  GEMM_F32_BINDINGS,
  GEMM_F32_DEFAULT_TILE,
  GEMM_F32_SMALL_TILE,
  gemmF32Geometry,
  gemmF32ShapeProblems,
  gemmF32TileProblems,
  gemmF32Wgsl,
  type GemmF32Kernel,
  type GemmF32Tile,
} from './gemm.wgsl';
export { gemmF32AnalyticOwnership, gemmF32Dims, gemmF32Plan, GEMM_OWNER_BUFFER } from './gemm.plan';
export { gemmF32Ref, gemmF32RefAt } from './gemm.oracle';
