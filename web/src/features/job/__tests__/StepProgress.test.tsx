import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { connectedState, fakeFetch, renderWithProviders } from '../../../test/renderWithProviders.js';
import { initialJobState } from '../slice.js';
import { StepProgress } from '../StepProgress.js';

afterEach(() => vi.unstubAllGlobals());

describe('Step 3 Cancel', () => {
  it('asks first; Keep sending leaves the job alone, Cancel job cancels it', async () => {
    const server = fakeFetch(() => ({ status: 404, body: { success: false, error: 'Not found' } }));
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    const job = {
      ...initialJobState,
      phase: 'progress' as const,
      jobId: 'j1',
      status: 'running' as const,
      monitoring: true,
      progress: { total: 5, sent: 1, failed: 0 },
    };
    const { store } = renderWithProviders(<StepProgress />, { preloadedState: { ...connectedState(), job } });
    const cancels = () => server.calls.filter((c) => c.method === 'POST' && c.url.pathname === '/cancel-job/j1').length;

    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    const dialog = screen.getByRole('dialog', { name: 'Cancel job' });
    expect(within(dialog).getByText('Cancel this job? Messages not sent yet will not be sent.')).toBeTruthy();
    await user.click(within(dialog).getByRole('button', { name: 'Keep sending' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(cancels()).toBe(0);

    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    await user.click(
      within(screen.getByRole('dialog', { name: 'Cancel job' })).getByRole('button', { name: 'Cancel job' }),
    );
    await waitFor(() => expect(cancels()).toBe(1));
    store.listener.clearListeners();
  });
});
