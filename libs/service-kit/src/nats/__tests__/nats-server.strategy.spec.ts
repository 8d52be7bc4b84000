import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { ServerNats } from '@nestjs/microservices';
import { KitNatsServer } from '../nats-server.strategy.js';

describe('KitNatsServer.getRouteFromPattern', () => {
  const kit = new KitNatsServer('nats://127.0.0.1:4222', 'spec', 'spec');
  const nest = new ServerNats({ servers: 'nats://127.0.0.1:4222' });
  afterEach(() => jest.restoreAllMocks());

  it('routes every kind of pattern as Nest does', () => {
    for (const pattern of [
      'sessions.0.send',
      'jobs.status',
      'templates.list',
      'events.>',
      '_INBOX.x',
      'true',
      'null',
      '{"cmd":"sum"}',
      '{"b":1,"a":2}',
      '123',
      '"quoted"',
    ]) {
      expect({ pattern, route: kit.getRouteFromPattern(pattern) }).toEqual({
        pattern,
        route: nest.getRouteFromPattern(pattern),
      });
    }
  });

  it('does not try JSON.parse on a plain subject (it would throw, an error and its stack trace per request)', () => {
    const parse = jest.spyOn(JSON, 'parse');
    kit.getRouteFromPattern('sessions.0.send');
    kit.getRouteFromPattern('jobs.status');
    const plainCalls = parse.mock.calls.length;
    kit.getRouteFromPattern('{"cmd":"sum"}');
    const objectCalls = parse.mock.calls.length - plainCalls;
    expect(plainCalls).toBe(0);
    expect(objectCalls).toBe(1);
  });
});
