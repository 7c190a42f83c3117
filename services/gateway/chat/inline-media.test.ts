import { deflateSync } from 'node:zlib';
import { gif, jpegHeader, onebitPng, pdf, webp } from '../../../test/support/media';
import {
  ANTHROPIC_IMAGE_MAX, OPENAI_IMAGE_MAX, PDF_PAGE_LIMIT, PDF_PAGE_TEXT, anthropicImageTokens, base64ImageSize, base64PdfPages, dataUrlBase64, imageSize, mediaRuleOf,
  mediaChargedTokens, mediaTokens, openAiImageTokens, tallyMedia, type InlineMedia,
} from './inline-media';
import { parseChatBody, parseMessagesBody } from './request';

const b64 = (bytes: Buffer) => bytes.toString('base64');

describe('image header readers', () => {
  it('when a PNG is given, then its IHDR width and height are read', () => {
    expect(base64ImageSize(b64(onebitPng(1568, 1568)))).toEqual({ width: 1568, height: 1568 });
    expect(base64ImageSize(b64(onebitPng(3, 7000)))).toEqual({ width: 3, height: 7000 });
  });
  it('when a JPEG is given, then its SOF0 or SOF2 frame header is read, past large metadata segments', () => {
    expect(base64ImageSize(b64(jpegHeader(1200, 800)))).toEqual({ width: 1200, height: 800 });
    expect(base64ImageSize(b64(jpegHeader(640, 4000, { progressive: true })))).toEqual({ width: 640, height: 4000 });
    // 200 KB of EXIF-like segments before the frame: far past the first 4 KB decoded.
    expect(base64ImageSize(b64(jpegHeader(5000, 3000, { padding: 200_000 })))).toEqual({ width: 5000, height: 3000 });
    // Base64 wrapped in lines (as MIME writes it): still read, and a header never found ends the reading.
    const wrapped = (bytes: Buffer) => b64(bytes).replace(/.{76}/g, '$&\r\n');
    expect(base64ImageSize(wrapped(jpegHeader(5000, 3000, { padding: 200_000 })))).toEqual({ width: 5000, height: 3000 });
    expect(base64ImageSize(wrapped(jpegHeader(5000, 3000, { padding: 200_000 }).subarray(0, 150_000)))).toBeUndefined();
  });
  it('when a GIF is given, then its logical screen is read', () => {
    expect(base64ImageSize(b64(gif(320, 4096)))).toEqual({ width: 320, height: 4096 });
  });
  it('when a WebP is given, then its VP8, VP8L or VP8X size is read', () => {
    expect(base64ImageSize(b64(webp('VP8 ', 1000, 700)))).toEqual({ width: 1000, height: 700 });
    expect(base64ImageSize(b64(webp('VP8L', 1568, 1568)))).toEqual({ width: 1568, height: 1568 });
    expect(base64ImageSize(b64(webp('VP8X', 16383, 20000)))).toEqual({ width: 16383, height: 20000 });
  });
  it('when the bytes are no image it knows, truncated, or of zero size, then no size is read', () => {
    expect(base64ImageSize(b64(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')))).toBeUndefined();
    expect(base64ImageSize(b64(jpegHeader(1200, 800, { padding: 70_000 }).subarray(0, 60_000)))).toBeUndefined();
    expect(base64ImageSize(b64(onebitPng(1, 1)).slice(0, 12))).toBeUndefined();
    expect(imageSize(gif(0, 10))).toBeUndefined();
    expect(base64ImageSize('')).toBeUndefined();
  });
  it('when a data: URL is given, then only its base64 payload is read', () => {
    expect(dataUrlBase64('data:image/png;base64,AAAA')).toBe('AAAA');
    expect(dataUrlBase64('data:image/svg+xml,<svg/>')).toBeUndefined();
  });
});

describe('the bound of one image, per provider', () => {
  it('when OpenAI serves it, then it is fitted in 2048², its short side to 768, 170 a 512-px tile plus 85 (low: 85)', () => {
    expect(openAiImageTokens({ width: 1024, height: 1024 })).toBe(765);
    expect(openAiImageTokens({ width: 2048, height: 4096 })).toBe(1105);
    expect(openAiImageTokens({ width: 512, height: 512 })).toBe(255);
    expect(openAiImageTokens({ width: 1568, height: 1568 })).toBe(765);
    expect(openAiImageTokens({ width: 4096, height: 8192 }, 'low')).toBe(85);
    expect(openAiImageTokens({ width: 768, height: 2048 })).toBe(OPENAI_IMAGE_MAX);
    expect(openAiImageTokens(undefined)).toBe(OPENAI_IMAGE_MAX);
    expect(OPENAI_IMAGE_MAX).toBe(1445);
  });
  it('when Anthropic serves it, then it is fitted to a long edge of 1568, ⌈w·h/750⌉ (or its 28-px patches), at most 1,600', () => {
    // 200×200: ⌈40,000/750⌉ = 54, but 8 × 8 patches of 28 px.
    expect(anthropicImageTokens({ width: 200, height: 200 })).toBe(64);
    expect(anthropicImageTokens({ width: 1000, height: 1000 })).toBe(1334);
    expect(anthropicImageTokens({ width: 1092, height: 1092 })).toBe(1590);
    expect(anthropicImageTokens({ width: 1568, height: 1568 })).toBe(ANTHROPIC_IMAGE_MAX);
    expect(anthropicImageTokens({ width: 8000, height: 8000 })).toBe(ANTHROPIC_IMAGE_MAX);
    // Long and thin: 56 patches of 28 px, more than its area / 750.
    expect(anthropicImageTokens({ width: 1568, height: 1 })).toBe(56);
    expect(anthropicImageTokens(undefined)).toBe(ANTHROPIC_IMAGE_MAX);
  });
  it('when the provider kind is neither (the simulated provider), then the larger of the two rules bounds it', () => {
    expect(mediaRuleOf('openai')).toBe('openai');
    expect(mediaRuleOf('anthropic')).toBe('anthropic');
    expect(mediaRuleOf('simulated')).toBe('either');
    const image = { type: 'image' as const, chars: 0, size: { width: 2048, height: 768 }, detail: 'low' };
    expect(mediaTokens('openai', image)).toBe(85);
    // Fitted to 1568 × 588: ⌈921,984/750⌉.
    expect(mediaTokens('anthropic', image)).toBe(1230);
    expect(mediaTokens('either', image)).toBe(1230);
  });
  it('when a part is bounded, then the estimate adds what its bound exceeds its bytes by, under the largest of the route\'s rules', () => {
    const tiny = { type: 'image' as const, chars: 500, size: { width: 1568, height: 1568 } };
    expect(tallyMedia([tiny], ['openai']).beyondBytes).toBe(765 - 500);
    expect(tallyMedia([tiny], ['openai', 'anthropic']).beyondBytes).toBe(1600 - 500);
    expect(tallyMedia([{ ...tiny, chars: 1_000_000 }], ['anthropic']).beyondBytes).toBe(0);
  });
});

describe('what one inline part is charged when the provider did not state the prompt (a cut stream)', () => {
  const image = (width: number, height: number, detail?: string): InlineMedia => ({ type: 'image', chars: 400, size: { width, height }, ...(detail ? { detail } : {}) });
  const unread: InlineMedia = { type: 'image', chars: 400 };

  it('when the image\'s dimensions were read, then it is charged what the rule computes for them, not the rule\'s most', () => {
    expect(mediaChargedTokens('openai', image(512, 512))).toBe(255);
    expect(mediaChargedTokens('openai', image(4096, 8192, 'low'))).toBe(85);
    expect(mediaChargedTokens('anthropic', image(200, 200))).toBe(64);
    // The simulated provider: the larger of the two, as it is held.
    expect(mediaChargedTokens('either', image(512, 512))).toBe(Math.max(255, anthropicImageTokens({ width: 512, height: 512 })));
  });

  it('when they were not read, then it is charged its bound, the rule\'s most', () => {
    expect(mediaChargedTokens('openai', unread)).toBe(OPENAI_IMAGE_MAX);
    expect(mediaChargedTokens('anthropic', unread)).toBe(ANTHROPIC_IMAGE_MAX);
  });

  it('when the model states its own most, then the rule\'s count is charged in proportion to it (image tokens multiplied: their own count), the most itself when unread', () => {
    // OpenAI's small model multiplying image tokens: 2,833 base, 5,667 a tile, 48,169 at most.
    expect(mediaChargedTokens('openai', image(512, 512, 'low'), 48_169)).toBe(2833);
    expect(mediaChargedTokens('openai', image(512, 512), 48_169)).toBe(2833 + 5667);
    expect(mediaChargedTokens('openai', image(1024, 1024), 48_169)).toBe(2833 + 4 * 5667);
    expect(mediaChargedTokens('openai', unread, 48_169)).toBe(48_169);
  });

  it('when a PDF is charged, then its pages count as the hold counts them', () => {
    const counted: InlineMedia = { type: 'pdf', chars: 900, pages: 3 };
    expect(mediaChargedTokens('anthropic', counted)).toBe(3 * (ANTHROPIC_IMAGE_MAX + PDF_PAGE_TEXT));
    expect(mediaChargedTokens('openai', { type: 'pdf', chars: 900 }, 2000)).toBe(PDF_PAGE_LIMIT * (2000 + PDF_PAGE_TEXT));
  });

  it('when any part is charged under any rule, with or without the model\'s most, then never more than its bound in the hold', () => {
    const parts: InlineMedia[] = [image(1, 1), image(512, 512), image(1568, 1568), image(768, 2048), image(1568, 1), image(9000, 300, 'low'), unread, { type: 'pdf', chars: 10, pages: 2 }, { type: 'pdf', chars: 10 }];
    for (const rule of ['openai', 'anthropic', 'either'] as const) {
      for (const imageMax of [undefined, 1, 700, 48_169, 1_048_576]) {
        for (const part of parts) expect(mediaChargedTokens(rule, part, imageMax)).toBeLessThanOrEqual(mediaTokens(rule, part, imageMax));
      }
    }
  });

  it('when a request has several parts, then each is charged under the largest of the route\'s rules, and their characters are counted', () => {
    expect(tallyMedia([image(512, 512), unread], ['openai'])).toEqual({ chars: 800, bound: 255 + 1445, beyondBytes: 1445 - 400, charged: 255 + 1445 });
    expect(tallyMedia([image(512, 512)], ['openai', 'anthropic']).charged).toBe(Math.max(255, anthropicImageTokens({ width: 512, height: 512 })));
  });
});

describe('the bound of one PDF', () => {
  it('when its page objects are plain or in a compressed object stream, then they are counted', () => {
    expect(base64PdfPages(b64(pdf(3)))).toBe(3);
    expect(base64PdfPages(b64(pdf(7, { compressed: true })))).toBe(7);
  });
  it('when its page tree lists a page more than once, then each listing counts (it is rendered each time)', () => {
    const thrice = '%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R 3 0 R\n3 0 R] /Count 1 >> endobj\n3 0 obj << /Type /Page /Parent 2 0 R >> endobj\n%%EOF';
    expect(base64PdfPages(b64(Buffer.from(thrice, 'latin1')))).toBe(3);
  });
  it('when a crafted PDF repeats keys without their arrays or streams, then it is read in one pass', () => {
    const started = performance.now();
    expect(base64PdfPages(b64(Buffer.from(`%PDF-1.4\n${'/Kids '.repeat(400_000)}/Kids [${'/Kids ['.repeat(300_000)}`, 'latin1')))).toBeUndefined();
    expect(base64PdfPages(b64(Buffer.from(`%PDF-1.4\n${'/Type /ObjStm stream\nx'.repeat(100_000)}`, 'latin1')))).toBeUndefined();
    const tiny = Buffer.concat([Buffer.from('/Type /ObjStm stream\n', 'latin1'), deflateSync(Buffer.from('<< /Type /Page >>')), Buffer.from('\nendstream\n', 'latin1')]);
    expect(base64PdfPages(b64(Buffer.concat([Buffer.from('%PDF-1.5\n'), ...Array.from({ length: 20_000 }, () => tiny)])))).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(2000);
  });
  it('when it is no PDF, or its pages cannot be found, then no count is given', () => {
    expect(base64PdfPages(b64(Buffer.from('hello')))).toBeUndefined();
    expect(base64PdfPages(b64(Buffer.from('%PDF-1.7\n%%EOF\n')))).toBeUndefined();
  });
  it('when bounded, then each page costs the image maximum plus 3,000 tokens of text; an uncounted PDF its provider\'s 100-page limit', () => {
    expect(mediaTokens('anthropic', { type: 'pdf', chars: 0, pages: 2 })).toBe(2 * (ANTHROPIC_IMAGE_MAX + PDF_PAGE_TEXT));
    expect(mediaTokens('openai', { type: 'pdf', chars: 0 })).toBe(PDF_PAGE_LIMIT * (OPENAI_IMAGE_MAX + PDF_PAGE_TEXT));
  });
});

describe('inline media read while a chat body is checked', () => {
  const png = `data:image/png;base64,${b64(onebitPng(1568, 1568))}`;
  it('when an OpenAI-wire body has an image_url data: URL or a file_data PDF, then each is read with its size, detail or pages', () => {
    const { media } = parseChatBody({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: png, detail: 'high' } }, { type: 'file', file: { filename: 'a.pdf', file_data: `data:application/pdf;base64,${b64(pdf(2))}` } }] }],
    });
    expect(media).toEqual([
      { type: 'image', chars: png.length, size: { width: 1568, height: 1568 }, detail: 'high' },
      { type: 'pdf', chars: expect.any(Number), pages: 2 },
    ]);
  });
  it('when an Anthropic-wire body has base64 image and document blocks, nested in a tool result too, then each is read', () => {
    const data = b64(onebitPng(1000, 500));
    const { media } = parseMessagesBody({
      messages: [
        { role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: b64(pdf(4, { compressed: true })) } }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'shot', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }] }] },
      ],
    });
    expect(media).toEqual([
      { type: 'pdf', chars: expect.any(Number), pages: 4 },
      { type: 'image', chars: data.length, size: { width: 1000, height: 500 } },
    ]);
  });
  it('when a body has no image or file, then nothing is read', () => {
    expect(parseChatBody({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] }).media).toBeUndefined();
    expect(parseMessagesBody({ messages: [{ role: 'user', content: 'hi' }] }).media).toBeUndefined();
  });
});
