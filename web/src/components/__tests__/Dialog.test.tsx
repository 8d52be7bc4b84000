import { fireEvent, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { BACKDROP_GRACE_MS, Dialog } from '../Dialog.js';

function Harness() {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Open
      </button>
      {open && (
        <Dialog title="Example" onClose={() => setOpen(false)} footer={<button type="button">Last</button>}>
          <input aria-label="Inside" />
        </Dialog>
      )}
    </>
  );
}

describe('Dialog', () => {
  it('traps Tab inside, closes on Escape and gives focus back', async () => {
    const user = userEvent.setup();
    render(<Harness />);
    const opener = screen.getByRole('button', { name: 'Open' });
    await user.click(opener);
    const dialog = screen.getByRole('dialog', { name: 'Example' });
    expect(dialog.getAttribute('aria-modal')).toBe('true');
    const close = screen.getByRole('button', { name: 'Close dialog' });
    expect(document.activeElement).toBe(close);
    await user.tab();
    expect(document.activeElement).toBe(screen.getByLabelText('Inside'));
    await user.tab();
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Last' }));
    await user.tab();
    expect(document.activeElement).toBe(close);
    await user.tab({ shift: true });
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Last' }));
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(document.activeElement).toBe(opener);
  });

  it('ignores a backdrop click right after opening (a double-click on the opener) and one that started inside', async () => {
    let now = 1_000_000;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => now);
    const user = userEvent.setup();
    render(<Harness />);
    await user.dblClick(screen.getByRole('button', { name: 'Open' }));
    const backdrop = document.querySelector('.dialog-backdrop')!;
    // The double-click's second click lands on the backdrop that just appeared.
    await user.click(backdrop);
    expect(screen.getByRole('dialog', { name: 'Example' })).toBeTruthy();

    now += BACKDROP_GRACE_MS;
    // A press inside the panel released on the backdrop (a text selection dragged out) keeps it open.
    fireEvent.mouseDown(screen.getByLabelText('Inside'));
    fireEvent.mouseUp(backdrop);
    fireEvent.click(backdrop);
    expect(screen.getByRole('dialog', { name: 'Example' })).toBeTruthy();

    await user.click(backdrop);
    expect(screen.queryByRole('dialog')).toBeNull();
    clock.mockRestore();
  });
});
