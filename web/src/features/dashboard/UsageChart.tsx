import type { MonthlyUsage } from '../../api/types.js';

/** The last 12 months ending with the current one, filled with zeros where the server has no row. */
export function last12Months(monthly: readonly MonthlyUsage[] | undefined, now = new Date()): MonthlyUsage[] {
  const byMonth = new Map((monthly ?? []).map((m) => [m.month.slice(0, 7), m]));
  const out: MonthlyUsage[] = [];
  for (let i = 11; i >= 0; i--) {
    const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1));
    const key = `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
    const m = byMonth.get(key);
    out.push({ month: key, sent: m?.sent ?? 0, failed: m?.failed ?? 0 });
  }
  return out;
}

const MONTH = new Intl.DateTimeFormat(undefined, { month: 'short', timeZone: 'UTC' });
const label = (key: string) => MONTH.format(new Date(`${key}-01T00:00:00Z`));

const W = 600;
const H = 200;
const PAD_L = 36;
const PAD_B = 24;
const PAD_T = 10;

/** Stacked bars (sent, failed) for 12 months in plain SVG, with a table for screen readers. */
export function UsageChart({ monthly }: { monthly: readonly MonthlyUsage[] | undefined }) {
  const months = last12Months(monthly);
  const max = Math.max(1, ...months.map((m) => m.sent + m.failed));
  const step = (W - PAD_L) / months.length;
  const barW = step * 0.6;
  const y = (v: number) => PAD_T + (H - PAD_T - PAD_B) * (1 - v / max);
  const ticks = [0, Math.round(max / 2), max].filter((v, i, a) => a.indexOf(v) === i);

  return (
    <figure className="usage-chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="usage-chart-title">
        <title id="usage-chart-title">Messages per month over the last 12 months</title>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={PAD_L} x2={W} y1={y(t)} y2={y(t)} className="chart-grid" />
            <text x={PAD_L - 6} y={y(t) + 4} textAnchor="end" className="chart-axis">
              {t}
            </text>
          </g>
        ))}
        {months.map((m, i) => {
          const x = PAD_L + i * step + (step - barW) / 2;
          return (
            <g key={m.month}>
              <rect x={x} y={y(m.sent)} width={barW} height={y(0) - y(m.sent)} className="bar-sent">
                <title>{`${label(m.month)}: ${m.sent} sent`}</title>
              </rect>
              <rect
                x={x}
                y={y(m.sent + m.failed)}
                width={barW}
                height={y(m.sent) - y(m.sent + m.failed)}
                className="bar-failed"
              >
                <title>{`${label(m.month)}: ${m.failed} failed`}</title>
              </rect>
              <text x={x + barW / 2} y={H - 6} textAnchor="middle" className="chart-axis">
                {label(m.month)}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption className="chart-legend">
        <span className="legend-sent">Sent</span> <span className="legend-failed">Failed</span>
      </figcaption>
      <table className="visually-hidden">
        <caption>Monthly usage</caption>
        <thead>
          <tr>
            <th scope="col">Month</th>
            <th scope="col">Sent</th>
            <th scope="col">Failed</th>
          </tr>
        </thead>
        <tbody>
          {months.map((m) => (
            <tr key={m.month}>
              <th scope="row">{m.month}</th>
              <td>{m.sent}</td>
              <td>{m.failed}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
