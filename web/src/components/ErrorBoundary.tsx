import { Component, type ErrorInfo, type ReactNode } from 'react';
import { WEB_MESSAGES } from '@bns/contracts';

interface Props {
  children: ReactNode;
  /** Which part of the page this guards (for the log line). */
  name: string;
}

/**
 * Keeps a drawing error in one part of the page from blanking the whole page: that part shows a short
 * notice and a button to draw it again; the rest (tabs, the activity log, sign-out) keeps working.
 */
export class ErrorBoundary extends Component<Props, { failed: boolean }> {
  override state = { failed: false };

  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    // The message and stack only: no state, which may hold phone numbers or message text.
    console.error(`[${this.props.name}] ${error.message}`, info.componentStack);
  }

  override render(): ReactNode {
    if (!this.state.failed) return this.props.children;
    return (
      <div className="view-crashed" role="alert">
        <p>{WEB_MESSAGES.viewCrashed}</p>
        <button type="button" className="button secondary small" onClick={() => this.setState({ failed: false })}>
          {WEB_MESSAGES.viewReload}
        </button>
      </div>
    );
  }
}
