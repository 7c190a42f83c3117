// The prompt tokens an inline image or PDF of a chat may cost (docs/money.md, "A chat's money
// path"). A provider bills an image by its pixel dimensions and a PDF by its pages, not by the
// bytes the request carries them in: a one-colour PNG of 1568×1568 fits in 400 bytes and is about
// 1,500 prompt tokens at Anthropic. So each inline part is bounded here, from its own header bytes, by the
// documented rule of the provider that serves it, as an upper bound (it may over-estimate, never
// under); what cannot be read is bounded by the most that provider bills for one such part.
//
// The header readers are hand-written: no image library is among the dependencies, and one would
// decode (or at least buffer) the whole image, where these decode a few KB of the base64 (a JPEG's
// frame header may follow its metadata segments: only the bytes up to it are decoded) and read
// nothing but the dimensions. A PDF's pages are counted from its bytes (its page objects, those
// inside compressed object streams too), inflating no more than MAX_INFLATED_BYTES.

import { inflateSync } from 'node:zlib';

/** One inline image or PDF of a request, as read while its content parts are checked. */
export type InlineMedia =
  | {
      type: 'image';
      /** The characters of its base64 (or data: URL) in the body: what the body's bytes already bound it by. */
      chars: number;
      /** Its pixel dimensions, from its header; absent when they could not be read. */
      size?: ImageSize;
      /** OpenAI's `detail` of an `image_url` part (`low` is a fixed cost there). */
      detail?: string;
    }
  | {
      type: 'pdf';
      chars: number;
      /** Its pages, counted from its bytes; absent when they could not be counted. */
      pages?: number;
    };

export interface ImageSize {
  width: number;
  height: number;
}

/**
 * Whose rule bounds a part: the upstream's provider kind (an `openai` entry: OpenAI's, an
 * `anthropic` entry: Anthropic's); any other (the simulated provider) the larger of the two.
 */
export type MediaRule = 'openai' | 'anthropic' | 'either';

export function mediaRuleOf(kind: unknown): MediaRule {
  return kind === 'openai' || kind === 'anthropic' ? kind : 'either';
}

/** OpenAI: a `detail: "low"` image costs this; a high or auto one this base plus a tile price per 512-px tile. */
export const OPENAI_IMAGE_BASE = 85;
export const OPENAI_IMAGE_TILE = 170;
/** The most tiles an OpenAI image can be: within 2048×2048 and its short side at most 768, 2 × 4 tiles. */
export const OPENAI_IMAGE_MAX = OPENAI_IMAGE_BASE + 8 * OPENAI_IMAGE_TILE;
/** Anthropic: the most prompt tokens one image costs (it scales larger images down to ~1.15 megapixels first). */
export const ANTHROPIC_IMAGE_MAX = 1600;
/** Anthropic scales an image whose long edge is above this down to it. */
const ANTHROPIC_LONG_EDGE = 1568;
/**
 * The text of one PDF page, allowed on top of the page's image (both providers give the model
 * each page as its extracted text and as an image): Anthropic documents 1,500 to 3,000 tokens of
 * text a page, this is the top of that range.
 */
export const PDF_PAGE_TEXT = 3000;
/** The most pages one PDF may have at either provider (a longer one is refused there, unbilled): its bound when its pages cannot be counted. */
export const PDF_PAGE_LIMIT = 100;

/** ⌈a / b⌉ of nonnegative integers, exactly, whatever their size. */
function ceilDiv(a: bigint, b: bigint): number {
  return Number((a + b - 1n) / b);
}

/**
 * OpenAI's rule: `detail: "low"` costs 85; otherwise the image is scaled down to fit within
 * 2048×2048, then down so its short side is at most 768, and costs 170 a 512-px tile it spans, plus 85.
 */
export function openAiImageTokens(size: ImageSize | undefined, detail?: string): number {
  if (detail === 'low') return OPENAI_IMAGE_BASE;
  if (!size) return OPENAI_IMAGE_MAX;
  const long = BigInt(Math.max(size.width, size.height));
  const short = BigInt(Math.min(size.width, size.height));
  // The two fits make one scale, num/den: 768/short when the short side still exceeds 768 after
  // the first fit (whatever that fit was), else 2048/long when the long side exceeds 2048, else 1.
  const [num, den] = short * 2048n > 768n * long && short > 768n ? [768n, short] : long > 2048n ? [2048n, long] : [1n, 1n];
  const tiles = ceilDiv(long * num, den * 512n) * ceilDiv(short * num, den * 512n);
  return Math.min(OPENAI_IMAGE_MAX, OPENAI_IMAGE_BASE + OPENAI_IMAGE_TILE * tiles);
}

/**
 * Anthropic's rule: an image is scaled down to fit a long edge of 1568 px and about 1.15
 * megapixels, and costs about width × height / 750 tokens, at most about 1,600. Bounded here by
 * the larger of that and one token per 28×28-px patch it spans (Anthropic also describes its
 * images as such patches, which is more for a long thin image), at most ANTHROPIC_IMAGE_MAX.
 */
export function anthropicImageTokens(size: ImageSize | undefined): number {
  if (!size) return ANTHROPIC_IMAGE_MAX;
  const long = BigInt(Math.max(size.width, size.height));
  const [num, den] = long > BigInt(ANTHROPIC_LONG_EDGE) ? [BigInt(ANTHROPIC_LONG_EDGE), long] : [1n, 1n];
  const width = BigInt(size.width);
  const height = BigInt(size.height);
  const byArea = ceilDiv(width * height * num * num, den * den * 750n);
  const byPatches = ceilDiv(width * num, den * 28n) * ceilDiv(height * num, den * 28n);
  return Math.min(ANTHROPIC_IMAGE_MAX, Math.max(byArea, byPatches));
}

function imageTokens(rule: MediaRule, size: ImageSize | undefined, detail: string | undefined): number {
  if (rule === 'openai') return openAiImageTokens(size, detail);
  if (rule === 'anthropic') return anthropicImageTokens(size);
  return Math.max(openAiImageTokens(size, detail), anthropicImageTokens(size));
}

/**
 * The most prompt tokens one inline part costs under the rule: an image by its size, a PDF page
 * as the largest image plus its text. `imageMax`: the model's own most for one image (the
 * catalog's `limits.max_image_tokens`), in place of the rule's.
 */
export function mediaTokens(rule: MediaRule, media: InlineMedia, imageMax?: number): number {
  if (media.type === 'image') return imageMax ?? imageTokens(rule, media.size, media.detail);
  return (media.pages ?? PDF_PAGE_LIMIT) * ((imageMax ?? imageTokens(rule, undefined, undefined)) + PDF_PAGE_TEXT);
}

/**
 * The prompt tokens one inline part is charged under the rule when the provider did not state
 * the prompt (a stream cut before its usage: docs/money.md, "A cut stream"): an image by its
 * dimensions where they were read (with `detail: "low"` on OpenAI's rule, 85), the rule's most
 * where they were not; with the model's own most (`imageMax`), that count in proportion to it,
 * ⌊count × imageMax / the rule's most⌋ (a model whose image tokens are the rule's multiplied is
 * charged its own count: OpenAI's small models' 2,833 + 5,667 a tile, of at most 48,169); a PDF
 * as the hold bounds it (its pages are all that is read of it). Never more than mediaTokens, the
 * part's bound in the hold.
 */
export function mediaChargedTokens(rule: MediaRule, media: InlineMedia, imageMax?: number): number {
  if (media.type === 'pdf') return mediaTokens(rule, media, imageMax);
  const tokens = imageTokens(rule, media.size, media.detail);
  if (imageMax === undefined) return tokens;
  return Number((BigInt(tokens) * BigInt(imageMax)) / BigInt(imageTokens(rule, undefined, undefined)));
}

/** What a request's inline parts come to, each under the largest of the rules it may be served by. */
export interface MediaTally {
  /** The characters that carry them in the body (their base64 or data: URLs). */
  chars: number;
  /** Their bounds (mediaTokens): what a tokens-per-minute limit counts them at admission. */
  bound: number;
  /** What the bounds exceed their characters by: what the reservation estimate adds to the body's bytes. */
  beyondBytes: number;
  /** What they are charged when the provider did not state the prompt (mediaChargedTokens). */
  charged: number;
}

export const NO_MEDIA: MediaTally = { chars: 0, bound: 0, beyondBytes: 0, charged: 0 };

/**
 * The request's inline parts under the rules of the upstreams that may serve it, the largest
 * per part. A part keeps its bytes in the reservation estimate; it adds what its bound exceeds
 * them by.
 */
export function tallyMedia(media: readonly InlineMedia[], rules: readonly MediaRule[], imageMax?: number): MediaTally {
  const tally = { ...NO_MEDIA };
  for (const part of media) {
    const bound = Math.max(...rules.map((rule) => mediaTokens(rule, part, imageMax)));
    tally.chars += part.chars;
    tally.bound += bound;
    tally.beyondBytes += Math.max(0, bound - part.chars);
    tally.charged += Math.max(...rules.map((rule) => mediaChargedTokens(rule, part, imageMax)));
  }
  return tally;
}

// --- Reading the parts ---------------------------------------------------------------------

/** Base64 decoded for the first read of an image's header: every format's fixed header fits; a JPEG may ask for more. */
const HEAD_BYTES = 4096;

/** The base64 payload of a `data:` URL, or undefined when it is not base64 (`data:…;base64,…`). */
export function dataUrlBase64(url: string): string | undefined {
  const comma = url.indexOf(',');
  if (comma < 0 || !/;base64$/i.test(url.slice(0, comma))) return undefined;
  return url.slice(comma + 1);
}

/** The base64 characters that decode to (at least, without whitespace) the first `bytes` bytes. */
const charsFor = (bytes: number) => Math.ceil(bytes / 3) * 4;

/** An image's dimensions from its base64, or undefined when its format or its header is not recognised. */
export function base64ImageSize(base64: string): ImageSize | undefined {
  let chars = charsFor(HEAD_BYTES);
  for (;;) {
    const head = Buffer.from(base64.slice(0, chars), 'base64');
    const read = imageSize(head);
    if (read === undefined || 'width' in read) return read;
    // A JPEG whose frame header lies past the bytes decoded: decode at least up to it, doubling
    // what is decoded so that many metadata segments cost a few decodes; once all is decoded, unread.
    if (chars >= base64.length) return undefined;
    chars = Math.max(charsFor(read.need), chars * 2);
  }
}

/** The dimensions in an image's first bytes; `need`: a JPEG's frame header needs this many bytes. */
export function imageSize(bytes: Uint8Array): ImageSize | { need: number } | undefined {
  const found = pngSize(bytes) ?? gifSize(bytes) ?? webpSize(bytes) ?? jpegSize(bytes);
  if (found && 'width' in found && (found.width === 0 || found.height === 0)) return undefined;
  return found;
}

const u16be = (b: Uint8Array, at: number) => (b[at] << 8) | b[at + 1];
const u16le = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8);
const u24le = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8) | (b[at + 2] << 16);
const u32be = (b: Uint8Array, at: number) => ((b[at] << 24) >>> 0) + ((b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]);
const ascii = (b: Uint8Array, at: number, text: string) => text.split('').every((c, i) => b[at + i] === c.charCodeAt(0));

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** PNG: the signature, then the IHDR chunk (width, height: big-endian 32-bit). */
function pngSize(b: Uint8Array): ImageSize | undefined {
  if (b.length < 24 || !PNG_SIGNATURE.every((v, i) => b[i] === v) || !ascii(b, 12, 'IHDR')) return undefined;
  return { width: u32be(b, 16), height: u32be(b, 20) };
}

/** GIF: the logical screen's width and height (little-endian 16-bit) after GIF87a/GIF89a. */
function gifSize(b: Uint8Array): ImageSize | undefined {
  if (b.length < 10 || !(ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a'))) return undefined;
  return { width: u16le(b, 6), height: u16le(b, 8) };
}

/** WebP: RIFF…WEBP, then a VP8 (lossy: its key frame's 14-bit sizes), VP8L (lossless: 14-bit sizes − 1) or VP8X (extended: the canvas, 24-bit sizes − 1) chunk. */
function webpSize(b: Uint8Array): ImageSize | undefined {
  if (b.length < 25 || !ascii(b, 0, 'RIFF') || !ascii(b, 8, 'WEBP')) return undefined;
  if (b.length >= 30 && ascii(b, 12, 'VP8 ') && b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a) return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff };
  if (ascii(b, 12, 'VP8L') && b[20] === 0x2f) {
    const bits = b[21] | (b[22] << 8) | (b[23] << 16) | (b[24] << 24);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (b.length >= 30 && ascii(b, 12, 'VP8X')) return { width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 };
  return undefined;
}

/** The JPEG markers that start a frame (SOF0–SOF15 but DHT, JPG and DAC): their header holds the size. */
const SOF_MARKERS = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

/**
 * JPEG: the segments after SOI, each skipped by its length, up to the first frame header (SOF0
 * baseline, SOF2 progressive…: height, then width, big-endian 16-bit). Metadata (EXIF, ICC
 * profiles) may come first and be large: past the bytes given, `need` says how many to decode.
 */
function jpegSize(b: Uint8Array): ImageSize | { need: number } | undefined {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return undefined;
  let at = 2;
  for (;;) {
    if (at + 9 > b.length) return { need: at + 9 };
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1];
    // Fill bytes before a marker.
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    // Markers without a length: TEM, RST0–7.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    if (SOF_MARKERS.has(marker)) return { width: u16be(b, at + 7), height: u16be(b, at + 5) };
    // The scan starts (or the image ends) before any frame header: not a JPEG this can read.
    if (marker === 0xda || marker === 0xd9) return undefined;
    at += 2 + u16be(b, at + 2);
  }
}

/** The most bytes a PDF's object streams are inflated to, in all, to find its page objects; past it its pages are not counted. */
export const MAX_INFLATED_BYTES = 32 * 1024 * 1024;
/** The most object streams of a PDF inflated (a real PDF has a few, a crafted one may have one every few bytes); past it its pages are not counted. */
const MAX_OBJECT_STREAMS = 4096;

/**
 * The pages of a PDF from its base64, an upper bound: its page objects (`/Type /Page`, not
 * `/Pages`; an old revision's pages are counted too), those in compressed object streams
 * included, or the references its page tree's `/Kids` arrays make if more (a page listed twice
 * is rendered twice). Undefined when none is found or a stream cannot be inflated (bounded then
 * by PDF_PAGE_LIMIT).
 */
export function base64PdfPages(base64: string): number | undefined {
  const pdf = Buffer.from(base64, 'base64');
  if (pdf.indexOf('%PDF-') < 0 || pdf.indexOf('%PDF-') > 1024) return undefined;
  const texts = [pdf.toString('latin1')];
  let inflated = 0;
  let streams = 0;
  for (const stream of objectStreams(texts[0])) {
    if (++streams > MAX_OBJECT_STREAMS) return undefined;
    let text: string;
    try {
      const out = inflateSync(pdf.subarray(stream.start, stream.end), { finishFlush: 2 /* Z_SYNC_FLUSH: tolerate the end-of-line before endstream */, maxOutputLength: MAX_INFLATED_BYTES - inflated });
      inflated += out.length;
      text = out.toString('latin1');
    } catch {
      return undefined;
    }
    texts.push(text);
  }
  let pages = 0;
  let kids = 0;
  for (const text of texts) {
    pages += (text.match(/\/Type\s*\/Page(?!s)/g) ?? []).length;
    kids += kidsReferences(text);
  }
  const count = Math.max(pages, kids);
  return count > 0 ? count : undefined;
}

/** The references (`n g R`) in a text's `/Kids [ … ]` arrays, in one pass: each array read once, nothing read twice. */
function kidsReferences(text: string): number {
  let references = 0;
  for (let at = text.indexOf('/Kids'); at >= 0; ) {
    let open = at + '/Kids'.length;
    while (open < text.length && ' \t\r\n\f\0'.includes(text[open])) open++;
    // Only an array right after the key is the key's.
    if (text[open] !== '[') {
      at = text.indexOf('/Kids', open);
      continue;
    }
    const close = text.indexOf(']', open);
    if (close < 0) break;
    references += (text.slice(open, close).match(/\bR\b/g) ?? []).length;
    at = text.indexOf('/Kids', close);
  }
  return references;
}

/** The byte ranges of a PDF's object streams (`/Type /ObjStm`), their data between `stream` and `endstream`. */
function* objectStreams(text: string): Generator<{ start: number; end: number }> {
  const objStm = /\/Type\s*\/ObjStm\b/g;
  for (let found = objStm.exec(text); found; found = objStm.exec(text)) {
    const keyword = text.indexOf('stream', found.index);
    if (keyword < 0) return;
    let start = keyword + 'stream'.length;
    if (text[start] === '\r') start++;
    if (text[start] === '\n') start++;
    const end = text.indexOf('endstream', start);
    if (end < 0) return;
    yield { start, end };
    objStm.lastIndex = end;
  }
}
