// The decode matvec family's only public entry: the generator, the plan and the family.
export {
  buildMatvecKernel,
  matvecWgsl,
  matvecWorkgroupBytes,
  type MatvecKernel,
  type MatvecSpec,
} from './matvec.wgsl';
export { matvecOwnership, matvecPlan } from './matvec.plan';
export { matvecQ4kFamily } from './matvec.family';
export { MATVEC_COLS, MATVEC_MAX_ROWS, MATVEC_PLANES, matvecQ4kCatalog } from './catalog';
