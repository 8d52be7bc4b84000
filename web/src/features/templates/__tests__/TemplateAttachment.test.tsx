import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Template, TemplateInput } from '@bns/contracts';
import { fakeFetch, renderWithProviders } from '../../../test/renderWithProviders.js';
import { TemplateFormDialog } from '../TemplateFormDialog.js';

afterEach(() => vi.unstubAllGlobals());

const template: Template = {
  id: '3f1c9a52-8a4e-4d0e-9c1b-4f1b2a7d9e10',
  name: 'Poster',
  description: '',
  message_content: 'New poster',
  phone_numbers: ['91234567'],
  category: 'general',
  is_favorite: false,
  usage_count: 0,
  created_at: '2026-12-02T00:00:00.000Z',
  updated_at: '2026-12-02T00:00:00.000Z',
  mediaId: 'med_poster',
};

describe("a template's attachment in its form", () => {
  it('shows it, keeps it on a save, and sends null once removed', async () => {
    vi.stubGlobal(
      'fetch',
      fakeFetch((_m, url) =>
        url.pathname === '/api/media/med_poster'
          ? {
              body: {
                success: true,
                mediaId: 'med_poster',
                kind: 'image',
                size: 9000,
                sha256: 'b'.repeat(64),
                fileName: 'poster.png',
                mime: 'image/png',
                createdAt: '2026-12-02T00:00:00.000Z',
              },
            }
          : { status: 404, body: {} },
      ).fn,
    );
    const saved: TemplateInput[] = [];
    const user = userEvent.setup();
    renderWithProviders(
      <TemplateFormDialog template={template} busy={false} onSubmit={(i) => saved.push(i)} onClose={() => undefined} />,
    );
    expect(await screen.findByText('poster.png')).toBeTruthy();
    expect(screen.getByText('Image · 9 KB')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Save Changes' }));
    expect(saved.at(-1)?.mediaId).toBe('med_poster');
    await user.click(screen.getByRole('button', { name: 'Remove' }));
    expect(screen.queryByTestId('template-attachment')).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Save Changes' }));
    expect(saved.at(-1)?.mediaId).toBeNull();
  });
});
