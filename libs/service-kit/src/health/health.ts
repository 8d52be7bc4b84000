import { Controller, Get, HttpCode, Inject, Res, SetMetadata } from '@nestjs/common';
import type { Response } from 'express';

/** Marks a route that needs no token (health probes, the dev issuer's JWKS). */
export const PUBLIC_ROUTE = 'bns:public';
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

export interface ReadinessCheck {
  name: string;
  /** Resolves with optional detail when the dependency is usable; rejects otherwise. */
  check(): Promise<unknown>;
}
export const READINESS_CHECKS = Symbol('READINESS_CHECKS');

export interface CheckResult {
  name: string;
  ok: boolean;
  ms: number;
  detail?: unknown;
  error?: string;
}

const CHECK_TIMEOUT_MS = 3000;

export async function runChecks(checks: readonly ReadinessCheck[]): Promise<{ ready: boolean; checks: CheckResult[] }> {
  const results = await Promise.all(
    checks.map(async ({ name, check }): Promise<CheckResult> => {
      const started = performance.now();
      let timer: NodeJS.Timeout | undefined;
      try {
        const detail = await Promise.race([
          check(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
          }),
        ]);
        return {
          name,
          ok: true,
          ms: Math.round(performance.now() - started),
          ...(detail === undefined ? {} : { detail }),
        };
      } catch (err) {
        return { name, ok: false, ms: Math.round(performance.now() - started), error: (err as Error).message };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ready: results.every((r) => r.ok), checks: results };
}

@Controller()
export class HealthController {
  constructor(@Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[]) {}

  /** Alive: the process answers. Kubernetes restarts it when this fails. */
  @Public()
  @Get('healthz')
  @HttpCode(200)
  healthz() {
    return { status: 'ok' };
  }

  /** Ready: every dependency answers. Kubernetes routes traffic only while this is 200. */
  @Public()
  @Get('readyz')
  async readyz(@Res({ passthrough: true }) res: Response) {
    const { ready, checks } = await runChecks(this.checks);
    res.status(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'unavailable', checks };
  }
}
