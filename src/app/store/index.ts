// The one module that imports zustand: binds the pure actions of ./state.ts (and the tuner's and the
// models' slices) to a store. Components read with `useApp(selector)` and change state only through
// `act(action, ...args)`.
import { create } from 'zustand';
import { useShallow } from 'zustand/react/shallow';
import type { AppState } from './state';

export * from './ab';
export * from './abActions';
export * from './drafts';
export * from './models';
export * from './peaks';
export * from './state';
export * from './sweep';
export * from './tunerState';

type Action<A extends unknown[]> = (state: AppState, ...args: A) => Partial<AppState>;

/** The store; created by `createAppStore` once the kernel families are known (see main.tsx). */
let store: ReturnType<typeof makeStore> | undefined;

function makeStore(initial: AppState) {
  return create<AppState>()(() => initial);
}

/** Create the app store with its initial state (once, at startup; tests create a fresh one each). */
export function createAppStore(initial: AppState): void {
  store = makeStore(initial);
}

function theStore() {
  if (!store) throw new Error('app store used before createAppStore()');
  return store;
}

/**
 * Apply a pure action to the store.
 * @example act(setParam, 'm', 64);
 */
export function act<A extends unknown[]>(action: Action<A>, ...args: A): void {
  const s = theStore();
  const patch = action(s.getState(), ...args);
  if (Object.keys(patch).length) s.setState(patch);
}

/** The current state (outside React). */
export function getApp(): AppState {
  return theStore().getState();
}

/** Subscribe outside React; returns the unsubscribe function. */
export function subscribeApp(listener: (state: AppState, prev: AppState) => void): () => void {
  return theStore().subscribe(listener);
}

/**
 * Read a slice of the state in a component; objects and arrays are compared shallowly.
 * @example const arm = useApp((s) => s.config.arm);
 */
export function useApp<T>(selector: (state: AppState) => T): T {
  return theStore()(useShallow(selector));
}
