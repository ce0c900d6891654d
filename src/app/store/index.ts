// The one module that imports zustand: binds the pure actions of ./state.ts to a store. Components read
// with `useApp(selector)` and change state only through `act(action, ...args)`.
import { create } from 'zustand';
import { useShallow } from 'zustand/react/shallow';
import type { AppState } from './state';

export * from './state';

type Action<A extends unknown[]> = (state: AppState, ...args: A) => Partial<AppState>;

/** The store; created by `createAppStore` once the kernel families are known (see main.tsx). */
let store: ReturnType<typeof makeStore> | undefined;

function makeStore(initial: AppState) {
  return create<AppState>()(() => initial);
}

/** Create the app store with its initial state (once, at startup). */
export function createAppStore(initial: AppState): void {
  store = makeStore(initial);
}

function theStore() {
  if (!store) throw new Error('app store used before createAppStore()');
  return store;
}

/**
 * Apply a pure action to the store.
 * @example act(setField, 'm', 64);
 */
export function act<A extends unknown[]>(action: Action<A>, ...args: A): void {
  const s = theStore();
  s.setState(action(s.getState(), ...args));
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
 * @example const m = useApp((s) => s.config.m);
 */
export function useApp<T>(selector: (state: AppState) => T): T {
  return theStore()(useShallow(selector));
}
