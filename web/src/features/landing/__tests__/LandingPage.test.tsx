import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CONTACT_EMAIL, MARKETING } from '@bns/contracts';
import { fakeFetch } from '../../../test/renderWithProviders.js';
import { AuthContext, type Auth } from '../../auth/auth-context.js';
import { LandingPage } from '../LandingPage.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('Landing page', () => {
  it('has the hero, statistics, how it works, the 3 steps and the footer of SPEC §2', async () => {
    const startSignIn = vi.fn();
    const auth: Auth = {
      mode: 'dev',
      status: 'signed-out',
      user: null,
      getToken: async () => null,
      startSignIn,
      signOut: async () => undefined,
    };
    render(
      <AuthContext.Provider value={auth}>
        <LandingPage />
      </AuthContext.Provider>,
    );
    expect(screen.getByText('Professional Bulk Messaging Solution')).toBeTruthy();
    for (const figure of [MARKETING.deliveryRate, MARKETING.messageCapacity, MARKETING.userCapacity])
      expect(screen.getByText(figure)).toBeTruthy();
    expect(screen.getByRole('heading', { name: 'See How It Works' })).toBeTruthy();
    expect(screen.getByText('Platform Demo')).toBeTruthy();
    expect(screen.getByText('3-minute walkthrough')).toBeTruthy();
    expect(screen.getByText('Tutorial Video')).toBeTruthy();
    for (const f of [
      'Template Setup',
      'File Upload',
      'Live Tracking',
      'Download Template',
      'Upload Contacts',
      'Send Messages',
    ])
      expect(screen.getByRole('heading', { name: f })).toBeTruthy();
    expect(screen.getByRole('heading', { name: 'Simple 3-Step Process' })).toBeTruthy();
    const hrefs = screen.getAllByRole('link').map((a) => a.getAttribute('href'));
    for (const anchor of [
      '#features',
      '#pricing',
      '#api',
      '#integrations',
      '#help',
      '#tutorials',
      '#status',
      '#contact',
      '#privacy',
      '#terms',
      '#cookies',
    ])
      expect(hrefs).toContain(anchor);
    for (const s of ['Twitter', 'Facebook', 'LinkedIn', 'Instagram'])
      expect(screen.getByRole('button', { name: s })).toBeTruthy();
    expect(screen.getByText('All systems operational')).toBeTruthy();
    expect(screen.getByText(/© 2025/)).toBeTruthy();
    expect(screen.getByRole('img', { name: /dashboard/i })).toBeTruthy();

    await userEvent.click(screen.getByRole('link', { name: 'Start Messaging' }));
    await userEvent.click(screen.getByRole('button', { name: 'Sign In' }));
    expect(startSignIn).toHaveBeenCalledTimes(2);
    // Without the gateway's settings, the default contact address.
    expect(screen.getByRole('link', { name: CONTACT_EMAIL }).getAttribute('href')).toBe(`mailto:${CONTACT_EMAIL}`);
  }, 15_000);

  it('shows the deployment’s SUPPORT_EMAIL from GET /api/config', async () => {
    const server = fakeFetch(() => ({
      body: { donationUrl: 'https://give.example.org', supportEmail: 'help@shop.hk', whatsappEngine: 'webjs' },
    }));
    vi.stubGlobal('fetch', server.fn);
    const auth: Auth = {
      mode: 'dev',
      status: 'signed-out',
      user: null,
      getToken: async () => null,
      startSignIn: () => undefined,
      signOut: async () => undefined,
    };
    render(
      <AuthContext.Provider value={auth}>
        <LandingPage />
      </AuthContext.Provider>,
    );
    expect((await screen.findByRole('link', { name: 'help@shop.hk' })).getAttribute('href')).toBe(
      'mailto:help@shop.hk',
    );
    expect(server.calls.map((c) => c.url.pathname)).toEqual(['/api/config']);
  });
});
