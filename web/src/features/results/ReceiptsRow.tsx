import type { JobReceipts } from '@bns/contracts';

/** Delivered, Read and Replied of a job: what happened to the messages after they were sent. */
export function ReceiptsRow({ receipts }: { receipts: JobReceipts }) {
  const items = [
    { label: 'Delivered', value: receipts.delivered, testId: 'count-delivered' },
    { label: 'Read', value: receipts.read, testId: 'count-read' },
    { label: 'Replied', value: receipts.replied, testId: 'count-replied' },
  ];
  return (
    <div className="receipts-row" aria-label="Receipts">
      {items.map((i) => (
        <div key={i.label} className="counter">
          <span className="counter-value" data-testid={i.testId}>
            {i.value}
          </span>
          <span className="counter-label">{i.label}</span>
        </div>
      ))}
    </div>
  );
}
