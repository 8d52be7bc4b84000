/**
 * Errors from whatsapp-web.js and puppeteer can quote chat ids and page text (phone numbers, message
 * text). Logs keep the error's kind and its message with every run of 6+ digits masked, never more.
 */
export function safeError(err: unknown): { name: string; message: string } {
  const name = err instanceof Error ? err.name : typeof err;
  const raw = err instanceof Error ? err.message : String(err);
  return { name, message: raw.replace(/\d{6,}/g, '<digits>').slice(0, 300) };
}
