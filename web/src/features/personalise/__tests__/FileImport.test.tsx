import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { FILE_MESSAGES } from '@bns/contracts';
import { renderWithProviders } from '../../../test/renderWithProviders.js';
import { FileImport } from '../FileImport.js';

const upload = async (file: File) => {
  // The picker's accept list is not applied: a file with a .csv name is still read by its content.
  const user = userEvent.setup({ applyAccept: false });
  await user.upload(screen.getByLabelText('Upload contacts file'), file);
};

describe('FileImport', { timeout: 15_000 }, () => {
  it('states the limits next to the drop zone', () => {
    renderWithProviders(<FileImport />);
    expect(screen.getByTestId('file-limits').textContent).toContain('CSV or XLSX, up to 20 MB and 200,000 rows.');
    expect(screen.getByLabelText('Upload contacts file').getAttribute('aria-describedby')).toBe(
      screen.getByTestId('file-limits').id,
    );
  });

  it('shows the row count and the recipients of a CSV, and adds them on Use', async () => {
    const { store } = renderWithProviders(<FileImport />);
    await upload(new File(['phone,name\n91234567,Ann\n61234567,Ben\nabc,Bad\n'], 'people.csv', { type: 'text/csv' }));
    await waitFor(() => expect(screen.getByTestId('file-row-count').textContent).toBe('3 rows'), { timeout: 4000 });
    expect(screen.getByTestId('file-summary').textContent).toContain('2 valid recipients, 1 row skipped');
    await userEvent.setup().click(screen.getByRole('button', { name: 'Use 2 recipients' }));
    await waitFor(() => expect(store.getState().sender.phoneNumbers).toEqual(['91234567', '61234567']));
    expect(store.getState().sender.variables['91234567']).toEqual({ name: 'Ann' });
  });

  it('refuses a file that is not a spreadsheet by its content, whatever its name', async () => {
    renderWithProviders(<FileImport />);
    await upload(
      new File([new Uint8Array([0x25, 0x50, 0x44, 0x46, 0, 1, 2, 3])], 'contacts.csv', { type: 'text/csv' }),
    );
    expect((await screen.findByRole('alert', {}, { timeout: 4000 })).textContent).toBe(FILE_MESSAGES.notSpreadsheet);
    await upload(
      new File(['# Read me\n\nThis explains the tool, how it works and more.\nSee the docs.\n'], 'README.txt', {
        type: 'text/plain',
      }),
    );
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe(FILE_MESSAGES.notSpreadsheet), {
      timeout: 4000,
    });
  });
});
