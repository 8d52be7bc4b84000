import type { SessionState } from './types.js';

export interface SessionConnectRequest {
  userId: string;
  explicit: boolean;
}
export interface SessionStatusReply {
  state: SessionState;
  sessionId?: string;
  phoneNumber?: string;
}

/** Logical keys; on the wire they are `sessions.<shard>.<verb>`. */
export interface SessionsRequests {
  'sessions.connect': { request: SessionConnectRequest; reply: SessionStatusReply };
  'sessions.status': { request: { userId: string }; reply: SessionStatusReply };
}
