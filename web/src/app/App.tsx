import { MARKETING } from '@bns/contracts';

/** Placeholder until the web issue lands the real landing page and tool. */
export function App() {
  return (
    <main>
      <h1>Business Notification System</h1>
      <p>Professional Bulk Messaging Solution · {MARKETING.deliveryRate} delivery rate</p>
    </main>
  );
}
