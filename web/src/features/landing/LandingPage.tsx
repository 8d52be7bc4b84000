import { MARKETING } from '@bns/contracts';
import { Brand } from '../../components/Brand.js';
import { useAuth } from '../auth/auth-context.js';
import { useWebConfig } from '../config/publicConfig.js';

/** Line icons drawn inline (no icon font, no emoji: they render the same everywhere). */
const ICONS = {
  template: 'M6 3h9l5 5v13H6zM14 3v6h6M9 13h8M9 17h8',
  upload: 'M12 16V4M7 9l5-5 5 5M4 16v4h16v-4',
  tracking: 'M3 20h18M6 16l4-5 4 3 5-7',
};

function Icon({ path }: { path: string }) {
  return (
    <svg
      viewBox="0 0 24 24"
      width="28"
      height="28"
      fill="none"
      stroke="currentColor"
      strokeWidth="2"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
    >
      <path d={path} />
    </svg>
  );
}

const FEATURES = [
  {
    icon: ICONS.template,
    title: 'Template Setup',
    text: 'Download an Excel/CSV template with the correct format: a phone column, names and any fields you want to personalise.',
  },
  {
    icon: ICONS.upload,
    title: 'File Upload',
    text: 'Drag and drop your filled template with contacts and messages; invalid rows are flagged with the reason.',
  },
  {
    icon: ICONS.tracking,
    title: 'Live Tracking',
    text: 'Watch every message go out with real-time progress tracking and live delivery monitoring.',
  },
];

const STEPS = [
  { title: 'Download Template', text: 'Get the Excel/CSV template with the correct columns.' },
  { title: 'Upload Contacts', text: 'Fill it in and drop it in: contacts and messages in one go.' },
  { title: 'Send Messages', text: 'Start the send and follow it live, message by message.' },
];

const STATS = [
  { value: MARKETING.deliveryRate, label: 'Delivery Rate' },
  { value: MARKETING.messageCapacity, label: 'Messages Capacity' },
  { value: MARKETING.userCapacity, label: 'Users Capacity' },
  { value: String(MARKETING.steps), label: 'Simple Steps' },
];

const SOCIAL = [
  { name: 'Twitter', glyph: '𝕏' },
  { name: 'Facebook', glyph: 'f' },
  { name: 'LinkedIn', glyph: 'in' },
  { name: 'Instagram', glyph: '◎' },
];

/** The public page (SPEC §2 "Landing page"): hero, screenshot, statistics, how it works, the 3 steps, footer. */
export function LandingPage() {
  const { startSignIn } = useAuth();
  const { supportEmail } = useWebConfig();
  return (
    <div className="landing">
      <header className="landing-header">
        <div className="container header-row">
          <Brand />
          <button type="button" className="button secondary small" onClick={startSignIn}>
            Sign In
          </button>
        </div>
      </header>

      <main>
        <section className="hero">
          <div className="container hero-grid">
            <div className="hero-copy">
              <span className="badge badge-hero">Professional Bulk Messaging Solution</span>
              <h1>Send personalised WhatsApp messages to all your customers, from your own number</h1>
              <p className="lead">
                Business Notification System links your WhatsApp account, sends your notifications at a safe pace and
                shows every delivery as it happens.
              </p>
              <a
                className="button primary large"
                href="#start"
                onClick={(e) => {
                  e.preventDefault();
                  startSignIn();
                }}
              >
                Start Messaging
              </a>
              <ul className="hero-claims" aria-label="Plan">
                <li>✓ Free to start</li>
                <li>✓ No setup fees</li>
                <li>✓ Cancel anytime</li>
              </ul>
            </div>
            <img
              className="hero-shot"
              src="/dashboard-screenshot.svg"
              width={640}
              height={420}
              alt="The dashboard: message statistics, monthly usage and recent messages"
            />
          </div>
        </section>

        <section className="stats-strip" aria-label="Statistics">
          <div className="container stats-strip-grid">
            {STATS.map((s) => (
              <div key={s.label} className="strip-stat">
                <span className="strip-value">{s.value}</span>
                <span className="strip-label">{s.label}</span>
              </div>
            ))}
          </div>
        </section>

        <section id="features" className="section">
          <div className="container">
            <h2 className="section-title">See How It Works</h2>
            <div className="video-card" role="img" aria-label="Platform Demo, a 3-minute walkthrough (tutorial video)">
              <span className="badge badge-video">Tutorial Video</span>
              <span className="play" aria-hidden="true">
                ▶
              </span>
              <strong>Platform Demo</strong>
              <span>{MARKETING.demoLength}</span>
            </div>
            <div className="feature-grid">
              {FEATURES.map((f) => (
                <article key={f.title} className="feature-card">
                  <span className="feature-icon">
                    <Icon path={f.icon} />
                  </span>
                  <h3>{f.title}</h3>
                  <p>{f.text}</p>
                </article>
              ))}
            </div>
          </div>
        </section>

        <section className="section alt" aria-labelledby="steps-title">
          <div className="container">
            <h2 id="steps-title" className="section-title">
              Simple 3-Step Process
            </h2>
            <ol className="process">
              {STEPS.map((s, i) => (
                <li key={s.title}>
                  <span className="process-number" aria-hidden="true">
                    {i + 1}
                  </span>
                  <h3>{s.title}</h3>
                  <p>{s.text}</p>
                </li>
              ))}
            </ol>
          </div>
        </section>
      </main>

      <footer className="landing-footer">
        <div className="container footer-grid">
          <div className="footer-brand">
            <Brand />
            <p>Professional bulk messaging for businesses of every size.</p>
            <div className="social" aria-label="Social media">
              {SOCIAL.map((s) => (
                // The glyph is drawn by CSS, so the button's text is its name alone (a visible "in" that
                // the name "LinkedIn" does not contain as a word fails WCAG 2.5.3, label in name).
                <button key={s.name} type="button" className="social-button" aria-label={s.name} data-glyph={s.glyph} />
              ))}
            </div>
          </div>
          <nav aria-label="Product">
            <h3>Product</h3>
            <ul>
              <li>
                <a href="#features">Features</a>
              </li>
              <li>
                <a href="#pricing">Pricing</a>
              </li>
              <li>
                <a href="#api">API</a>
              </li>
              <li>
                <a href="#integrations">Integrations</a>
              </li>
            </ul>
          </nav>
          <nav aria-label="Support">
            <h3>Support</h3>
            <ul>
              <li>
                <a href="#help">Help Center</a>
              </li>
              <li>
                <a href="#tutorials">Tutorials</a>
              </li>
              <li>
                <a href="#status">Status</a>
              </li>
              <li>
                <a href="#contact">Contact</a>
              </li>
            </ul>
          </nav>
          <div>
            <h3>Get in Touch</h3>
            <p>
              <a href={`mailto:${supportEmail}`}>{supportEmail}</a>
            </p>
            <p className="status-indicator">
              <span className="dot dot-green" aria-hidden="true" /> All systems operational
            </p>
          </div>
        </div>
        <div className="container footer-bottom">
          <p>© {MARKETING.copyrightYear} Business Notification System. All rights reserved.</p>
          <nav aria-label="Legal" className="legal">
            <a href="#privacy">Privacy Policy</a>
            <a href="#terms">Terms of Service</a>
            <a href="#cookies">Cookie Policy</a>
          </nav>
        </div>
      </footer>
    </div>
  );
}
