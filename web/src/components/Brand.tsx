export function Brand() {
  return (
    <div className="brand">
      <span className="brand-mark" aria-hidden="true">
        ✉
      </span>
      <span className="brand-name">Business Notification System</span>
    </div>
  );
}
