import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { estimatedUploadSeconds, LIMITS, MEDIA_LIMITS, MEDIA_MESSAGES } from '@bns/contracts';
import { makeStore } from '../../../app/store.js';
import { connectedState, renderWithProviders, TEST_USER } from '../../../test/renderWithProviders.js';
import { startSending } from '../../job/thunks.js';
import { loadTemplate } from '../../templates/thunks.js';
import { StepCompose } from '../StepCompose.js';
import { StepReview } from '../StepReview.js';
import { initialSenderState, type Attachment } from '../slice.js';

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

/**
 * The gateway's POST /api/media: what each upload carried (its content type and multipart field), and
 * the answer the test chooses. (jsdom's File does not cross into Node's fetch, so its bytes are not
 * checked here; the gateway's tests check uploads byte for byte.)
 */
function mediaServer(answer: () => Response) {
  const uploads: { type: string; field: boolean }[] = [];
  const fn = async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(input, init);
    const url = new URL(req.url);
    if (url.pathname !== '/api/media' || req.method !== 'POST') return json(404, {});
    const text = await req.text();
    uploads.push({ type: req.headers.get('content-type') ?? '', field: text.includes('name="file"') });
    return answer();
  };
  return { fn, uploads };
}

const png = () => new File([new Uint8Array(4096)], 'logo.png', { type: 'image/png' });

beforeEach(() => {
  vi.stubGlobal('URL', Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:thumb'), revokeObjectURL: vi.fn() }));
});
afterEach(() => vi.unstubAllGlobals());

describe('Attach file', () => {
  it('uploads the chosen file, shows its kind, name, size and a thumbnail, and removes it', async () => {
    const server = mediaServer(() =>
      json(201, {
        success: true,
        mediaId: 'med_logo',
        kind: 'image',
        size: 4096,
        sha256: 'a'.repeat(64),
        fileName: 'logo.png',
        mime: 'image/png',
        createdAt: '2026-12-02T00:00:00.000Z',
      }),
    );
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    const { store } = renderWithProviders(<StepCompose />, { preloadedState: connectedState() });
    // The limits shown are the contracts' own.
    expect(screen.getByText(new RegExp(MEDIA_MESSAGES.limitsHint.slice(0, 40).replace(/[()]/g, '.')))).toBeTruthy();
    await user.upload(screen.getByTestId('attachment-input'), png());

    const chip = await screen.findByTestId('attachment-chip');
    expect(within(chip).getByText('logo.png')).toBeTruthy();
    expect(within(chip).getByText('Image · 4 KB')).toBeTruthy();
    expect(chip.querySelector('img')?.getAttribute('src')).toBe('blob:thumb');
    expect(server.uploads).toEqual([{ type: expect.stringMatching(/^multipart\/form-data; boundary=/), field: true }]);
    expect(store.getState().sender.attachment).toMatchObject({ mediaId: 'med_logo', kind: 'image', size: 4096 });
    // The caption keeps the message's limit.
    expect(screen.getByText(`0/${LIMITS.messageMaxLength} characters`)).toBeTruthy();

    await user.click(screen.getByRole('button', { name: 'Remove logo.png' }));
    expect(screen.queryByTestId('attachment-chip')).toBeNull();
    expect(store.getState().sender.attachment).toBeNull();
  });

  it("shows the server's reason for a refused file, and a too-large one without uploading it", async () => {
    const server = mediaServer(() => json(400, { success: false, error: MEDIA_MESSAGES.program }));
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    const { store } = renderWithProviders(<StepCompose />, { preloadedState: connectedState() });
    await user.upload(
      screen.getByTestId('attachment-input'),
      new File([new Uint8Array([0x4d, 0x5a, 1, 2])], 'invoice.pdf', { type: 'application/pdf' }),
    );
    expect((await screen.findByRole('alert')).textContent).toBe(MEDIA_MESSAGES.program);
    expect(store.getState().sender.attachment).toBeNull();

    const huge = new File([], 'film.mp4');
    Object.defineProperty(huge, 'size', { value: MEDIA_LIMITS.maxUploadBytes + 1 });
    await user.upload(screen.getByTestId('attachment-input'), huge);
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe(MEDIA_MESSAGES.uploadTooLarge));
    expect(server.uploads).toHaveLength(1);
  });
});

describe('Review and start with an attachment', () => {
  const pdf: Attachment = { mediaId: 'med_menu', kind: 'document', fileName: 'menu.pdf', size: 2.5 * 1024 * 1024 };

  it('shows the document as WhatsApp would, with the caption, and counts its upload in the estimate', () => {
    renderWithProviders(<StepReview />, {
      preloadedState: {
        ...connectedState(),
        sender: { ...initialSenderState, message: 'Our *menu*', phoneNumbers: ['91234567'], attachment: pdf },
      },
    });
    const bubble = screen.getByLabelText('Message preview');
    expect(within(bubble).getByText('menu.pdf')).toBeTruthy();
    expect(within(bubble).getByText('Document · 2.5 MB')).toBeTruthy();
    expect(within(bubble).getByText('menu').tagName).toBe('STRONG');
    // The file comes before its caption, as on the phone.
    expect(bubble.firstElementChild?.getAttribute('data-testid')).toBe('bubble-file');
    // One recipient (2 s) and the 2.5 MB upload (3 s at 1 s per MB): about 1 minute.
    expect(screen.getByTestId('review-estimate').textContent).toBe(
      `Estimated time: about 1 minute (including about ${estimatedUploadSeconds(pdf.size)} s to upload the attachment once, at 1 s per MB)`,
    );
  });

  it('shows an image above its caption', () => {
    renderWithProviders(<StepReview />, {
      preloadedState: {
        ...connectedState(),
        sender: {
          ...initialSenderState,
          message: 'New poster',
          phoneNumbers: ['91234567'],
          attachment: { mediaId: 'med_p', kind: 'image', fileName: 'poster.png', size: 2048, previewUrl: 'blob:p' },
        },
      },
    });
    const bubble = screen.getByLabelText('Message preview');
    expect(bubble.firstElementChild?.tagName).toBe('IMG');
    expect(bubble.firstElementChild?.getAttribute('src')).toBe('blob:p');
  });

  it('starts the send with the mediaId', async () => {
    const bodies: unknown[] = [];
    vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = input instanceof Request ? input : new Request(input, init);
      bodies.push(JSON.parse(await req.text()));
      return json(200, { success: true, jobId: 'job-1', estimatedTime: 1 });
    });
    const store = makeStore({
      session: TEST_USER,
      preloadedState: {
        ...connectedState(),
        sender: { ...initialSenderState, message: 'Menu', phoneNumbers: ['91234567'], attachment: pdf },
      },
    });
    await store.dispatch(startSending());
    expect(bodies).toEqual([expect.objectContaining({ message: 'Menu', mediaId: 'med_menu' })]);
  });
});

describe("a template's Use", () => {
  const template = {
    id: '3f1c9a52-8a4e-4d0e-9c1b-4f1b2a7d9e10',
    name: 'Poster',
    description: '',
    message_content: 'New poster',
    phone_numbers: ['91234567'],
    category: 'general' as const,
    is_favorite: false,
    usage_count: 0,
    created_at: '2026-12-02T00:00:00.000Z',
    updated_at: '2026-12-02T00:00:00.000Z',
    mediaId: 'med_poster',
  };

  it('brings its attachment along, read from the server', async () => {
    const asked: string[] = [];
    vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = input instanceof Request ? input : new Request(input, init);
      asked.push(new URL(req.url).pathname);
      return json(200, {
        success: true,
        mediaId: 'med_poster',
        kind: 'image',
        size: 9000,
        sha256: 'b'.repeat(64),
        fileName: 'poster.png',
        mime: 'image/png',
        createdAt: '2026-12-02T00:00:00.000Z',
      });
    });
    const store = makeStore({ session: TEST_USER, preloadedState: connectedState() });
    expect(await store.dispatch(loadTemplate(template, ['91234567']))).toBe(true);
    expect(asked).toEqual(['/api/media/med_poster']);
    expect(store.getState().sender).toMatchObject({
      message: 'New poster',
      templateId: template.id,
      attachment: { mediaId: 'med_poster', kind: 'image', fileName: 'poster.png', size: 9000 },
    });
  });

  it('says so when the attachment is no longer stored, and loads the rest', async () => {
    vi.stubGlobal('fetch', async () => json(404, { success: false, error: MEDIA_MESSAGES.notFound }));
    const store = makeStore({ session: TEST_USER, preloadedState: connectedState() });
    expect(await store.dispatch(loadTemplate(template, ['91234567']))).toBe(false);
    expect(store.getState().sender).toMatchObject({ message: 'New poster', attachment: null });
  });
});
