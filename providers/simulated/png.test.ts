import { crc32, inflateSync } from 'node:zlib';
import { solidPng } from './png';

interface PngChunk {
  type: string;
  data: Buffer;
  crc: number;
}

/** Splits a PNG after its 8-byte signature into its chunks. */
function chunks(png: Buffer): PngChunk[] {
  const all: PngChunk[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    all.push({ type, data: png.subarray(at + 8, at + 8 + length), crc: png.readUInt32BE(at + 8 + length) });
    at += 12 + length;
  }
  return all;
}

describe('solidPng', () => {
  const png = solidPng(3, 2, [10, 20, 30]);

  it('when encoded, then it is the signature then IHDR, IDAT and IEND with valid CRCs', () => {
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const all = chunks(png);
    expect(all.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    for (const c of all) expect(c.crc).toBe(crc32(Buffer.concat([Buffer.from(c.type, 'latin1'), c.data])));
  });

  it('when the header is read, then it says width × height, 8-bit RGB, not interlaced', () => {
    const header = chunks(png)[0].data;
    expect([header.readUInt32BE(0), header.readUInt32BE(4), ...header.subarray(8)]).toEqual([3, 2, 8, 2, 0, 0, 0]);
  });

  it('when the pixel data is inflated, then every row is filter 0 and every pixel the colour', () => {
    const row = [0, 10, 20, 30, 10, 20, 30, 10, 20, 30];
    expect([...inflateSync(chunks(png)[1].data)]).toEqual([...row, ...row]);
  });

  it('when encoded twice alike, then the bytes are the same', () => {
    expect(solidPng(3, 2, [10, 20, 30])).toEqual(png);
    expect(solidPng(3, 2, [10, 20, 31])).not.toEqual(png);
  });
});
