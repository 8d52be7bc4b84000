import {
  configureStore,
  createAction,
  createListenerMiddleware,
  type ThunkAction,
  type UnknownAction,
} from '@reduxjs/toolkit';
import { api } from '../api/api.js';
import type { SessionState } from '../features/auth/slice.js';
import { createSocketMiddleware, type SocketFactory } from '../features/connection/socketMiddleware.js';
import { registerListeners } from './listeners.js';
import { slices, type RootState } from './state.js';

export type { RootState };

/** Sign-out clears every piece of local state but who the store belongs to (SPEC §4.6). */
export const localStateCleared = createAction('app/localStateCleared');

const rootReducer = (state: RootState | undefined, action: UnknownAction): RootState => {
  if (localStateCleared.match(action) && state) return slices({ session: state.session } as RootState, action);
  return slices(state, action);
};

export interface StoreOptions {
  session: SessionState;
  preloadedState?: Partial<RootState>;
  socketFactory?: SocketFactory;
  onUnauthorized?: () => void;
}

export function makeStore({ session, preloadedState, socketFactory, onUnauthorized }: StoreOptions) {
  const listener = createListenerMiddleware();
  const store = configureStore({
    reducer: rootReducer,
    preloadedState: { ...preloadedState, session } as RootState,
    middleware: (getDefault) =>
      getDefault()
        .prepend(listener.middleware)
        .concat(api.middleware, createSocketMiddleware(socketFactory, onUnauthorized)),
  });
  registerListeners(listener.startListening.withTypes<RootState, typeof store.dispatch>());
  return Object.assign(store, { listener });
}

export type AppStore = ReturnType<typeof makeStore>;
export type AppDispatch = AppStore['dispatch'];
export type AppThunk<R = Promise<void>> = ThunkAction<R, RootState, unknown, UnknownAction>;
