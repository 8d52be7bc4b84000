/** A tiny authenticated JSON client for tests and benchmarks. */
export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export function api(baseUrl: string, token?: string) {
  const call = async <T = any>(
    method: string,
    path: string,
    body?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<ApiResponse<T>> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...extraHeaders,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON; keep the text
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  };
  return {
    get: <T = any>(path: string, headers?: Record<string, string>) => call<T>('GET', path, undefined, headers),
    post: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) =>
      call<T>('POST', path, body ?? {}, headers),
    put: <T = any>(path: string, body?: unknown) => call<T>('PUT', path, body ?? {}),
    patch: <T = any>(path: string, body?: unknown) => call<T>('PATCH', path, body ?? {}),
    delete: <T = any>(path: string) => call<T>('DELETE', path),
  };
}

/**
 * The gateway's count of job-status revalidations (If-None-Match), by who answered: its memory, or the
 * jobs service. `metricsUrl`: the gateway's metrics endpoint (ServiceHandle.metricsUrl), not its API.
 */
export async function revalidationsAnswered(metricsUrl: string): Promise<{ memory: number; jobs: number }> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const count = (by: string) =>
    Number(
      new RegExp(`^bns_gateway_job_status_revalidations_total\\{[^}]*answered_by="${by}"[^}]*\\} (\\d+)`, 'm').exec(
        text,
      )?.[1] ?? 0,
    );
  return { memory: count('memory'), jobs: count('jobs') };
}
