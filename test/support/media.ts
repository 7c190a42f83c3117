// Small real images and PDFs, built from their bytes, for the tests of how inline media are
// bounded (services/gateway/chat/inline-media.ts): each format's header as its specification
// lays it out, with the dimensions asked for.

import { deflateSync } from 'node:zlib';
import { chunk as pngChunk, SIGNATURE as PNG_SIGNATURE } from '../../providers/simulated/png';

/** A width × height 1-bit greyscale PNG, all black: a large image in a few hundred bytes. */
export function onebitPng(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  const rows = Buffer.alloc((1 + Math.ceil(width / 8)) * height); // each row: filter 0, then zero bits
  return Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', header), pngChunk('IDAT', deflateSync(rows)), pngChunk('IEND', Buffer.alloc(0))]);
}

/** A JPEG's start: SOI, an APP0 (JFIF) segment, `padding` bytes of APP1 segments (metadata), then a baseline (SOF0) or progressive (SOF2) frame header. */
export function jpegHeader(width: number, height: number, options: { progressive?: boolean; padding?: number } = {}): Buffer {
  const segment = (marker: number, body: Buffer) => Buffer.concat([Buffer.from([0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 0xff]), body]);
  const app1: Buffer[] = [];
  for (let left = options.padding ?? 0; left > 0; left -= 60_000) app1.push(segment(0xe1, Buffer.alloc(Math.min(left, 60_000), 0x20)));
  const frame = Buffer.from([8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), segment(0xe0, Buffer.from('JFIF\0\x01\x02\0\0\x01\0\x01\0\0', 'latin1')), ...app1, segment(options.progressive ? 0xc2 : 0xc0, frame), Buffer.from([0xff, 0xd9])]);
}

/** A GIF89a of the given logical screen, one empty frame. */
export function gif(width: number, height: number): Buffer {
  const screen = Buffer.from([width & 0xff, width >> 8, height & 0xff, height >> 8, 0, 0, 0]);
  return Buffer.concat([Buffer.from('GIF89a', 'latin1'), screen, Buffer.from([0x3b])]);
}

/** A WebP's RIFF header and first chunk: VP8 (lossy key frame), VP8L (lossless) or VP8X (extended canvas). */
export function webp(kind: 'VP8 ' | 'VP8L' | 'VP8X', width: number, height: number): Buffer {
  let chunk: Buffer;
  if (kind === 'VP8 ') {
    chunk = Buffer.alloc(10);
    chunk.set([0x9d, 0x01, 0x2a], 3);
    chunk.writeUInt16LE(width, 6);
    chunk.writeUInt16LE(height, 8);
  } else if (kind === 'VP8L') {
    chunk = Buffer.alloc(5);
    chunk[0] = 0x2f;
    chunk.writeUInt32LE(((width - 1) | ((height - 1) << 14)) >>> 0, 1);
  } else {
    chunk = Buffer.alloc(10);
    chunk.writeUIntLE(width - 1, 4, 3);
    chunk.writeUIntLE(height - 1, 7, 3);
  }
  const body = Buffer.concat([Buffer.from('WEBP', 'latin1'), Buffer.from(kind, 'latin1'), Buffer.from([chunk.length & 0xff, chunk.length >> 8, 0, 0]), chunk]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}

/**
 * A PDF of `pages` empty pages: its page objects written plainly, or (compressed) inside one
 * deflated object stream, as PDF 1.5 writers do.
 */
export function pdf(pages: number, options: { compressed?: boolean } = {}): Buffer {
  const kids = Array.from({ length: pages }, (_, i) => `${3 + i} 0 R`).join(' ');
  const pageObjects = Array.from({ length: pages }, (_, i) => `${3 + i} 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>\nendobj\n`).join('');
  const head = `%PDF-1.5\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [${kids}] /Count ${pages} >>\nendobj\n`;
  if (!options.compressed) return Buffer.from(`${head}${pageObjects}trailer\n<< /Root 1 0 R >>\n%%EOF\n`, 'latin1');
  const inStream = Array.from({ length: pages }, () => '<< /Type/Page /Parent 2 0 R /MediaBox [0 0 612 792] >>').join('\n');
  const data = deflateSync(Buffer.from(inStream, 'latin1'));
  // The page tree is written with /Count only (no /Kids array in the clear), so the pages are found in the stream alone.
  const plainHead = `%PDF-1.5\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Count ${pages} >>\nendobj\n`;
  return Buffer.concat([Buffer.from(`${plainHead}9 0 obj\n<< /Type /ObjStm /N ${pages} /First 0 /Filter /FlateDecode /Length ${data.length} >>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n', 'latin1')]);
}
