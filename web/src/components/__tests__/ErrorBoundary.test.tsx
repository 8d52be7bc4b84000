import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WEB_MESSAGES } from '@bns/contracts';
import { ErrorBoundary } from '../ErrorBoundary.js';

afterEach(() => vi.restoreAllMocks());

let broken = true;
function Fragile() {
  if (broken) throw new Error('Cannot read properties of undefined (reading results)');
  return <p>drawn</p>;
}

describe('ErrorBoundary', () => {
  it('shows a notice instead of blanking the page, keeps its siblings, and draws the part again on request', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    render(
      <div>
        <ErrorBoundary name="send">
          <Fragile />
        </ErrorBoundary>
        <p>sibling</p>
      </div>,
    );
    expect(screen.getByRole('alert').textContent).toContain(WEB_MESSAGES.viewCrashed);
    expect(screen.getByText('sibling')).toBeTruthy();
    broken = false;
    await userEvent.setup().click(screen.getByRole('button', { name: WEB_MESSAGES.viewReload }));
    expect(screen.getByText('drawn')).toBeTruthy();
    expect(screen.queryByRole('alert')).toBeNull();
  });
});
