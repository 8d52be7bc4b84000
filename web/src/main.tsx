import { StrictMode, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { Root } from './app/Root.js';
import { DevAuthProvider } from './features/auth/DevAuthProvider.js';
import './styles/app.css';

const container = document.getElementById('root')!;
const render = (tree: ReactNode) => createRoot(container).render(<StrictMode>{tree}</StrictMode>);
const clerkKey = import.meta.env.VITE_CLERK_PUBLISHABLE_KEY as string | undefined;

if (clerkKey) {
  // Clerk is a separate chunk: a build without a key never downloads it.
  void import('./features/auth/ClerkAuthProvider.js').then(({ ClerkAuthProvider }) =>
    render(
      <ClerkAuthProvider publishableKey={clerkKey}>
        <Root />
      </ClerkAuthProvider>,
    ),
  );
} else {
  render(
    <DevAuthProvider>
      <Root />
    </DevAuthProvider>,
  );
}
