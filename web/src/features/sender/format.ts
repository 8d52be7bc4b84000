/**
 * WhatsApp-style formatting of the preview (SPEC §5): *bold*, _italic_ and links. A marker counts only
 * at a word edge with no space just inside it, as WhatsApp does, so "2*3*4" or "snake_case_name" stay
 * plain; URLs are found first, so an underscore inside a link never turns italic.
 */
export type FormatNode =
  string | { kind: 'bold' | 'italic'; children: FormatNode[] } | { kind: 'link'; href: string; text: string };

const URL_RE = /\b(?:https?:\/\/|www\.)[^\s<>"]+[^\s<>".,;:!?)\]'*_]/gi;
const STYLE_RE = /(^|[\s([{"'])([*_])(?=\S)([^\n]*?\S)\2(?=$|[\s.,;:!?)\]}"'])/;

function styled(text: string): FormatNode[] {
  const out: FormatNode[] = [];
  let rest = text;
  for (;;) {
    const m = STYLE_RE.exec(rest);
    if (!m) break;
    const [, lead, marker, inner] = m;
    const start = m.index + lead!.length;
    if (start > 0) out.push(rest.slice(0, start));
    out.push({ kind: marker === '*' ? 'bold' : 'italic', children: styled(inner!) });
    rest = rest.slice(start + 1 + inner!.length + 1);
  }
  if (rest) out.push(rest);
  return out;
}

export function formatMessage(text: string): FormatNode[] {
  const out: FormatNode[] = [];
  let last = 0;
  for (const m of text.matchAll(URL_RE)) {
    if (m.index > last) out.push(...styled(text.slice(last, m.index)));
    const raw = m[0];
    out.push({ kind: 'link', href: raw.toLowerCase().startsWith('www.') ? `https://${raw}` : raw, text: raw });
    last = m.index + raw.length;
  }
  if (last < text.length) out.push(...styled(text.slice(last)));
  return out;
}
