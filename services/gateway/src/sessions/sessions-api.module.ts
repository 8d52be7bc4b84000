import { Module } from '@nestjs/common';

/** /api/session/cleanup, the socket's createSession and the dev simulator calls, answered by the sessions service over NATS. */
@Module({})
export class SessionsApiModule {}
