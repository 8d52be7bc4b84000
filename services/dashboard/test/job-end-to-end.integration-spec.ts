import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { io, type Socket } from 'socket.io-client';
import { SOCKET, SOCKET_CLIENT_EVENTS, SOCKET_EVENTS, type DashboardData, type JobView } from '@bns/contracts';
import { api, devSignIn, simulatorScan, startSystem, waitFor, type System } from '@bns/testing';

const NOT_ON_WHATSAPP = '98000002';
/** WhatsApp takes this one and then refuses it (an error ack): failed, never sent. */
const REFUSED = '98000005';
/** On the account's opt-out list: skipped, never sent to. */
const OPTED_OUT = '98000006';

/**
 * The whole system: a real bulk job through gateway → jobs → sessions (simulated WhatsApp), whose
 * events alone build the dashboard. Nothing is published by the test.
 */
describe('the dashboard after a real job (every service, simulated WhatsApp)', () => {
  let sys: System;
  let socket: Socket | undefined;

  beforeAll(async () => {
    sys = await startSystem({
      shards: 2,
      env: {
        SIM_QR_INTERVAL_MS: '5000',
        SIM_READY_DELAY_MS: '50',
        SIM_FAIL_NUMBERS: `852${NOT_ON_WHATSAPP}`,
        SIM_REFUSE_NUMBERS: REFUSED,
        SIM_REFUSE_DELAY_MS: '50',
        SIM_DELIVERED_DELAY_MS: '100',
        SIM_READ_DELAY_MS: '300',
      },
      serviceEnv: { jobs: { SEND_DELAY_MS: '200' } },
    });
  }, 180_000);

  afterAll(async () => {
    socket?.close();
    await sys?.stop();
  });

  it('shows the link, counts what the job sent and failed (a refused send as failed), and follows the acks to read', async () => {
    const { token, userId } = await devSignIn(sys.gateway.url, 'dana@shop.hk');
    const http = api(sys.gateway.url, token);
    const dashboard = async (): Promise<DashboardData> => {
      const res = await http.get(`/api/dashboard/${userId}`);
      expect(res.status).toBe(200);
      return res.body.data as DashboardData;
    };

    // Link WhatsApp as the web does: ask for a QR over the socket, then "scan" it.
    const s = io(sys.gateway.url, {
      path: SOCKET.path,
      transports: [...SOCKET.transports],
      auth: { token },
      reconnection: false,
      forceNew: true,
    });
    socket = s;
    let ready = false;
    s.on(SOCKET_EVENTS.ready, () => (ready = true));
    await new Promise<void>((resolve, reject) => {
      s.once('connect', () => resolve());
      s.once('connect_error', reject);
    });
    s.emit(SOCKET_CLIENT_EVENTS.createSession, { id: userId, clerkUserId: userId, isExplicitRequest: true });
    await simulatorScan(sys.gateway.url, token);
    await waitFor(() => ready, 15_000, 25, 'ready');

    const linked = await waitFor(
      async () => {
        const d = await dashboard();
        return d.stats.activeSessions === 1 ? d : undefined;
      },
      10_000,
      100,
      'the link on the dashboard',
    );
    expect(linked.sessions[0]).toMatchObject({ active: true, phoneNumber: expect.stringMatching(/^\d+$/) });

    const optOut = await http.post(`/api/opt-outs/${userId}`, { phoneNumbers: [OPTED_OUT] });
    expect(optOut.status).toBe(200);
    const started = await http.post('/start-bulk-messages', {
      clerkUserId: userId,
      message: 'Your order is ready for pickup',
      phoneNumbers: ['98000001', NOT_ON_WHATSAPP, '98000003', '98000004', REFUSED, OPTED_OUT],
    });
    expect(started.status).toBe(200);
    const jobId = started.body.jobId as string;
    const job = await waitFor(
      async () => {
        const res = await http.get(`/job-status/${jobId}`);
        const j = res.body.job as JobView;
        // The refusal comes after the send was counted: the job moves it to failed when it arrives.
        return ['completed', 'failed', 'cancelled'].includes(j.status) && j.progress.failed === 2 ? j : undefined;
      },
      30_000,
      250,
      'the job to finish and count the refusal',
    );
    expect(job.progress).toEqual({ total: 6, sent: 3, failed: 2, skipped: 1 });

    // The job's own figures and the dashboard's agree, and the acks end every sent message at read.
    const data = await waitFor(
      async () => {
        const d = await dashboard();
        return d.messages.filter((m) => m.status === 'read').length === 3 &&
          d.stats.failedMessages === 2 &&
          d.stats.skippedMessages === 1
          ? d
          : undefined;
      },
      15_000,
      200,
      'the dashboard to show the job and its acks',
    );
    expect(data.stats).toEqual({
      totalMessages: 5,
      successfulMessages: job.progress.sent,
      failedMessages: job.progress.failed,
      activeSessions: 1,
      repliedMessages: 0,
      // Skipped is an outcome of its own: not a message, not in the total.
      skippedMessages: 1,
    });
    expect(data.usage.messages_sent_count).toBe(job.progress.sent);
    expect(data.usage.messages_failed_count).toBe(job.progress.failed);
    expect(data.usage.messages_skipped_count).toBe(1);
    expect(data.messages).toHaveLength(5);
    expect(data.messages.every((m) => m.job_id === jobId && m.content === 'Your order is ready for pickup')).toBe(true);
    const failed = data.messages.filter((m) => m.status === 'failed');
    expect(failed.map((m) => m.recipient.slice(-8)).sort()).toEqual([NOT_ON_WHATSAPP, REFUSED]);
    expect(failed.every((m) => typeof m.error === 'string' && m.error !== '')).toBe(true);
    expect(data.messages.filter((m) => m.status === 'read').every((m) => m.sent_at !== null && m.error === null)).toBe(
      true,
    );
  }, 90_000);
});
