// Small shapes per family for the app's end-to-end runs (e2e/ and the worker client's Dawn test): each
// family declares its own (FamilyCatalog.small), so a new family is walked without a line here.
import { CATALOG } from '../src/kernels/catalog';

/** Small shapes per family id (params over the defaults): each runs in a second or two on SwiftShader. */
export const SMALL: Readonly<Record<string, Readonly<Record<string, number>>>> = Object.fromEntries(
  CATALOG.families.map((c) => [c.id, c.small]),
);
