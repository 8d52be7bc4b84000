import { createSlice } from '@reduxjs/toolkit';

export interface SessionState {
  userId: string;
  email: string;
  firstName: string | null;
  /** This tab's id, sent as clientId with a job and as the socket's createSession id. */
  clientId: string;
}

const initialState: SessionState = { userId: '', email: '', firstName: null, clientId: '' };

/** Who is signed in; set when the store is made and never changed (signing out discards the store). */
export const sessionSlice = createSlice({
  name: 'session',
  initialState,
  reducers: {},
  selectors: {
    selectUserId: (s) => s.userId,
    selectClientId: (s) => s.clientId,
    selectDisplayName: (s) => s.firstName || s.email,
  },
});

export const { selectUserId, selectClientId, selectDisplayName } = sessionSlice.selectors;
