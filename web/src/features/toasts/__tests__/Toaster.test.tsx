import { act, render } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { Toaster } from '../Toaster.js';
import { toast } from '../toasts.js';

function ActivityLogHead({ rect }: { rect: Partial<DOMRect> }) {
  return (
    <aside className="activity-log">
      <div
        className="card-title-row"
        ref={(el) => {
          if (el)
            el.getBoundingClientRect = () => ({
              top: 0,
              bottom: 0,
              left: 0,
              right: 0,
              width: 0,
              height: 0,
              x: 0,
              y: 0,
              toJSON: () => ({}),
              ...rect,
            });
        }}
      />
    </aside>
  );
}

describe('Toaster', () => {
  it('starts under the Activity Log title when that sits top right, so its title, count and Clear stay visible', () => {
    const { container } = render(
      <>
        <ActivityLogHead rect={{ top: 84, bottom: 130, left: 680, right: 1000, width: 320 }} />
        <Toaster />
      </>,
    );
    act(() => {
      toast.info('Phone numbers added');
    });
    expect((container.querySelector('.toaster') as HTMLElement).style.top).toBe('138px');
  });

  it('stays under the header elsewhere (no log, or the log far down the page)', () => {
    const { container, unmount } = render(<Toaster />);
    act(() => {
      toast.info('Settings saved');
    });
    expect((container.querySelector('.toaster') as HTMLElement).style.top).toBe('');
    unmount();

    const below = render(
      <>
        <ActivityLogHead rect={{ top: 900, bottom: 950, left: 0, right: 1000, width: 1000 }} />
        <Toaster />
      </>,
    );
    act(() => {
      toast.info('Settings saved');
    });
    expect((below.container.querySelector('.toaster') as HTMLElement).style.top).toBe('');
  });
});
