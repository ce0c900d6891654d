// What components get from the app shell: the controller, their one way to the worker. The kernel
// families' declarations are in the store (state.catalogs).
import { createContext, useContext } from 'react';
import type { Controller } from './controller';

export interface AppServices {
  controller: Controller;
}

export const AppContext = createContext<AppServices | null>(null);

/** The app services; throws outside <AppContext.Provider>. */
export function useServices(): AppServices {
  const s = useContext(AppContext);
  if (!s) throw new Error('useServices outside AppContext');
  return s;
}
