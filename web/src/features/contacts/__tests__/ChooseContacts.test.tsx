import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeFetch, renderWithProviders } from '../../../test/renderWithProviders.js';
import { ChooseContacts } from '../ChooseContacts.js';
import { columnsOf } from '../chooseContacts.js';

afterEach(() => vi.unstubAllGlobals());

describe('Choose contacts', () => {
  it('turns recipients into the sender’s columns, a missing variable as a blank cell', () => {
    expect(
      columnsOf([
        { phone: '91234567', variables: { name: 'Ann', city: 'Sha Tin' } },
        { phone: '92345678', variables: { name: 'Ben' } },
      ]),
    ).toEqual({
      phones: ['91234567', '92345678'],
      rows: [0, 0],
      names: ['name', 'city'],
      values: [
        ['Ann', 'Ben'],
        ['Sha Tin', ''],
      ],
    });
  });

  it('adds every page of a segment to the recipients with their variables', async () => {
    const fetch = fakeFetch((_method, url) => {
      if (url.pathname === '/api/segments')
        return { body: { segments: [{ id: 'seg-1', name: 'VIPs', rule: {}, createdAt: '' }] } };
      if (url.pathname === '/api/segments/seg-1/count') return { body: { count: 3 } };
      if (url.pathname === '/api/segments/seg-1/members') {
        if (!url.searchParams.get('cursor'))
          return {
            body: {
              recipients: [
                { phone: '91234567', variables: { name: 'Ann' } },
                { phone: '92345678', variables: {} },
              ],
              nextCursor: '92345678',
              asOf: '2026-12-02T10:00:00.000Z',
            },
          };
        expect(url.searchParams.get('asOf')).toBe('2026-12-02T10:00:00.000Z');
        return {
          body: {
            recipients: [{ phone: '93456789', variables: { name: 'Cat' } }],
            nextCursor: null,
            asOf: '2026-12-02T10:00:00.000Z',
          },
        };
      }
      return { status: 404, body: {} };
    });
    vi.stubGlobal('fetch', fetch.fn);
    const { store } = renderWithProviders(<ChooseContacts />);
    await userEvent.click(screen.getByRole('button', { name: 'Choose contacts' }));
    await userEvent.selectOptions(await screen.findByLabelText('Segment'), 'seg-1');
    expect(await screen.findByText('3 contacts')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Add to recipients' }));
    await waitFor(() => expect(store.getState().sender.phoneNumbers).toEqual(['91234567', '92345678', '93456789']));
    expect(store.getState().sender.variables['91234567']).toEqual({ name: 'Ann' });
    expect(store.getState().sender.variables['92345678']).toEqual({});
    expect(screen.getByRole('button', { name: 'Choose contacts' })).toBeTruthy();
  }, 30_000);
});
