import { useLayoutEffect, useRef, useState } from 'react';
import { dismissToast, useToasts } from './toasts.js';

const ICONS = { success: '✓', error: '!', warning: '!', info: 'i' } as const;
/** The stack's top under the header (as the stylesheet places it). */
const TOP_PX = 72;
const GAP_PX = 8;
/** Below this width the stack is as wide as the page. */
const NARROW_PX = 700;

/** The stack's top, in the window (fixed) or in the page (scrolling with it, on a narrow screen). */
interface Placement {
  top: number;
  inPage: boolean;
}

/**
 * Where the stack starts: under the header, or under the Activity Log's title row when that row sits
 * where the toasts go (top right, on the Send tab), so its title, count and Clear stay readable while
 * toasts show. Followed while the page scrolls (the log is sticky).
 */
function useTopClearOfActivityLog(active: boolean): Placement | undefined {
  const [top, setTop] = useState<Placement | undefined>(undefined);
  useLayoutEffect(() => {
    if (!active) return;
    const place = () => {
      // On a narrow screen the stack sits in the room the page keeps for it above its content, and
      // scrolls with the page: fixed, it would lie over whatever control the page has scrolled under it.
      const main = document.querySelector('.app-main')?.getBoundingClientRect();
      if (window.innerWidth < NARROW_PX && main) {
        setTop({ top: Math.round(main.top + window.scrollY + GAP_PX), inPage: true });
        return;
      }
      // Never over the header (on a phone it wraps taller than on a desktop, Sign Out included).
      const header = document.querySelector('.app-header')?.getBoundingClientRect();
      const belowHeader = header && header.height > 0 ? Math.round(header.bottom + GAP_PX) : TOP_PX;
      const head = document.querySelector('.activity-log .card-title-row')?.getBoundingClientRect();
      const underToasts =
        head !== undefined &&
        head.width > 0 &&
        head.right > window.innerWidth / 2 &&
        head.bottom > TOP_PX &&
        head.top < window.innerHeight / 3;
      const fixedTop = underToasts ? Math.round(head.bottom + GAP_PX) : belowHeader > TOP_PX ? belowHeader : undefined;
      setTop(fixedTop === undefined ? undefined : { top: fixedTop, inPage: false });
    };
    place();
    window.addEventListener('scroll', place, { passive: true });
    window.addEventListener('resize', place);
    return () => {
      window.removeEventListener('scroll', place);
      window.removeEventListener('resize', place);
    };
  }, [active]);
  return active ? top : undefined;
}

/** Top-right stack; each toast closes itself after 3 s (LIMITS.toastMs) or on its close button. */
export function Toaster() {
  const toasts = useToasts();
  const top = useTopClearOfActivityLog(toasts.length > 0);
  const ref = useRef<HTMLDivElement>(null);
  // On a narrow screen the stack spans the page: the page makes room for it above its content
  // (--toast-room), so a toast lies over no control.
  // Measured again when the window is resized (a phone turned, a window narrowed while a toast shows).
  useLayoutEffect(() => {
    const root = document.documentElement;
    const room = () => {
      const narrow = window.innerWidth < NARROW_PX;
      const height = toasts.length > 0 && narrow ? (ref.current?.getBoundingClientRect().height ?? 0) : 0;
      root.style.setProperty('--toast-room', `${Math.ceil(height + (height > 0 ? GAP_PX : 0))}px`);
    };
    room();
    window.addEventListener('resize', room);
    return () => {
      window.removeEventListener('resize', room);
      root.style.setProperty('--toast-room', '0px');
    };
  }, [toasts]);
  return (
    <div
      ref={ref}
      className="toaster"
      aria-live="polite"
      aria-relevant="additions"
      style={
        top === undefined
          ? undefined
          : top.inPage
            ? // Under the sticky header when the page scrolls: never over its controls.
              { top: top.top, position: 'absolute', zIndex: 5 }
            : { top: top.top }
      }
    >
      {toasts.map((t) => (
        <div key={t.id} className={`toast toast-${t.kind}`} role={t.kind === 'error' ? 'alert' : 'status'}>
          <span className="toast-icon" aria-hidden="true">
            {ICONS[t.kind]}
          </span>
          <span className="toast-message">{t.message}</span>
          <button
            type="button"
            className="toast-close"
            aria-label="Dismiss notification"
            onClick={() => dismissToast(t.id)}
          >
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
