// A minimal PNG encoder for simulated images: one flat colour, 8-bit RGB, no interlace, a
// single IDAT chunk. Any decoder opens it, and the same size and colour give the same bytes.
// CRC-32 is zlib's own (node:zlib crc32, the same polynomial as PNG's).

import { crc32, deflateSync } from 'node:zlib';

export type Rgb = readonly [red: number, green: number, blue: number];

export const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const COLOUR_TYPE_RGB = 2;

/** A width × height PNG of one colour. */
export function solidPng(width: number, height: number, [red, green, blue]: Rgb): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per sample
  header[9] = COLOUR_TYPE_RGB;
  // compression, filter and interlace methods stay 0: deflate, adaptive, none
  const row = Buffer.alloc(1 + width * 3); // filter type 0 (None), then the pixels
  for (let x = 0; x < width; x++) row.set([red, green, blue], 1 + x * 3);
  const pixels = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(pixels)), chunk('IEND', Buffer.alloc(0))]);
}

/** A PNG chunk: length, type, data, CRC of type and data. */
export function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
