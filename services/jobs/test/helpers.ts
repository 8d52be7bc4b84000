import { io, type Socket } from 'socket.io-client';
import { JOB_MESSAGES, SOCKET, type JobView } from '@bns/contracts';
import {
  api,
  devSignIn,
  simulatorOutbox,
  simulatorScan,
  waitFor,
  type DevSession,
  type SimulatorMessage,
} from '@bns/testing';

export type Api = ReturnType<typeof api>;

export interface Received {
  name: string;
  payload: any;
}

/** A socket.io client as the web app opens it, keeping what it receives. */
export class Tab {
  readonly received: Received[] = [];
  private constructor(readonly socket: Socket) {
    socket.onAny((name: string, payload: unknown) => this.received.push({ name, payload }));
  }
  static async open(gatewayUrl: string, token: string): Promise<Tab> {
    const socket = io(gatewayUrl, {
      path: SOCKET.path,
      transports: [...SOCKET.transports],
      auth: { token },
      reconnection: false,
      forceNew: true,
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', reject);
    });
    return new Tab(socket);
  }
  named(name: string): Received[] {
    return this.received.filter((r) => r.name === name);
  }
  waitFor(name: string, timeoutMs = 15_000): Promise<Received> {
    return waitFor(() => this.named(name).at(-1), timeoutMs, 25, `socket event ${name}`);
  }
  close(): void {
    this.socket.close();
  }
}

export interface User extends DevSession {
  gatewayUrl: string;
  client: Api;
  tab: Tab;
}

export async function signIn(gatewayUrl: string, email: string): Promise<User> {
  const session = await devSignIn(gatewayUrl, email);
  return {
    ...session,
    gatewayUrl,
    client: api(gatewayUrl, session.token),
    tab: await Tab.open(gatewayUrl, session.token),
  };
}

/** Asks for a QR and scans it with the simulator, as a user linking WhatsApp would. */
export async function link(user: User): Promise<void> {
  const before = user.tab.named('ready').length;
  user.tab.socket.emit('createSession', { id: user.userId, clerkUserId: user.userId, isExplicitRequest: true });
  await simulatorScan(user.gatewayUrl, user.token);
  await waitFor(() => user.tab.named('ready').length > before, 15_000, 25, 'ready');
}

export async function signInLinked(gatewayUrl: string, email: string): Promise<User> {
  const user = await signIn(gatewayUrl, email);
  await link(user);
  return user;
}

export type OutboxMessage = SimulatorMessage;

/** What arrived on the simulated WhatsApp for one job, in send order. */
export async function outboxOf(user: User, jobId: string): Promise<OutboxMessage[]> {
  return (await simulatorOutbox(user.gatewayUrl, user.token))
    .filter((m) => m.idempotencyKey.startsWith(`${jobId}:`))
    .sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}

export async function startJob(user: User, body: Record<string, unknown>): Promise<string> {
  const res = await user.client.post('/start-bulk-messages', { clerkUserId: user.userId, ...body });
  if (res.status !== 200) throw new Error(`start: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.jobId as string;
}

export async function jobOf(user: User, jobId: string): Promise<JobView> {
  const res = await user.client.get(`/job-status/${jobId}`);
  if (res.status !== 200) throw new Error(`status: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.job as JobView;
}

export function waitForJob(
  user: User,
  jobId: string,
  until: (job: JobView) => boolean,
  timeoutMs = 30_000,
  what = 'job',
): Promise<JobView> {
  let seen = '';
  return waitFor(
    async () => {
      const job = await jobOf(user, jobId);
      seen = `${job.status}, ${job.progress.sent} of ${job.progress.total} sent`;
      return until(job) ? job : undefined;
    },
    timeoutMs,
    250,
    what,
  ).catch((err: Error) => {
    // Say where the job stood, so a timeout on a loaded machine tells a slow job from a stuck one.
    throw new Error(`${err.message} (last seen: ${seen || 'never read'})`);
  });
}

/**
 * Cancels a job and checks that it took: a test that goes on while a job it meant to stop still runs
 * (a 503 from a loaded gateway, say) would queue the user's next jobs behind it. A 503 is asked again
 * a second later, for up to 20 s; a job that finished on its own first is stopped too.
 */
export async function cancelJob(user: User, jobId: string): Promise<JobView> {
  const res = await waitFor(
    async () => {
      const r = await user.client.post(`/cancel-job/${jobId}`);
      if (r.status === 503) return undefined;
      return r;
    },
    20_000,
    1_000,
    `cancel of ${jobId} past 503s`,
  );
  // 409: it finished on its own first, which is as stopped as a cancel.
  if (res.status === 409 && res.body.error === JOB_MESSAGES.alreadyFinished) return jobOf(user, jobId);
  if (res.status !== 200 || !isFinished(res.body.job))
    throw new Error(`cancel: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.job as JobView;
}

export const isFinished = (job: JobView) => ['completed', 'failed', 'cancelled'].includes(job.status);

/** Distinct 8-digit Hong Kong numbers. */
export function numbers(n: number, from = 60_000_000): string[] {
  return Array.from({ length: n }, (_, i) => String(from + i));
}
