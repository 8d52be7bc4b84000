/** A tab whose work has not landed yet: what it will hold, and where that is today. */
export function ComingSoonTab({ title, children }: { title: string; children: string }) {
  return (
    <section className="card coming-soon" aria-labelledby={`coming-${title}`}>
      <h2 id={`coming-${title}`}>{title}</h2>
      <p>{children}</p>
    </section>
  );
}
