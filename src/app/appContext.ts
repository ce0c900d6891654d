// What components get from the app shell: the controller (their one way to the worker) and the
// kernel families (pure data + validate(), for the controls).
import { createContext, useContext } from 'react';
import type { KernelFamily } from '../kernels/family';
import type { Controller } from './controller';

export interface AppServices {
  controller: Controller;
  families: readonly KernelFamily[];
}

export const AppContext = createContext<AppServices | null>(null);

/** The app services; throws outside <AppContext.Provider>. */
export function useServices(): AppServices {
  const s = useContext(AppContext);
  if (!s) throw new Error('useServices outside AppContext');
  return s;
}
