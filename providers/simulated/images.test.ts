import { inflateSync } from 'node:zlib';
import type { ImageArtifact, ImageCall, SimDirectives } from '../port';
import { SIM_IMAGE_SIZE, SimulatedImageProvider } from './images';

const provider = new SimulatedImageProvider();
const SENT_AT = 1_700_000_123_456;

const PICTURE = { taskId: 'task-1', upstreamModel: 'sim-image', prompt: 'a red fox', responseFormat: 'b64_json', passthrough: { size: '1024x1024' } } as const;

/** The call as the gateway keeps it for a later lookup: sent now unless told otherwise. */
function sent(directives?: SimDirectives, overrides: Partial<Omit<ImageCall, 'signal'>> = {}): Omit<ImageCall, 'signal'> {
  return { ...PICTURE, passthrough: { ...PICTURE.passthrough }, directives, sentAt: Date.now(), ...overrides };
}

function call(directives?: SimDirectives, overrides: Partial<ImageCall> = {}): ImageCall {
  return { signal: new AbortController().signal, ...sent(directives, overrides) };
}

const notAborted = (): AbortSignal => new AbortController().signal;

function pngOf(artifact: ImageArtifact): Buffer {
  if (artifact.b64Json !== undefined) return Buffer.from(artifact.b64Json, 'base64');
  const prefix = 'data:image/png;base64,';
  if (!artifact.url?.startsWith(prefix)) throw new Error(`not a PNG data URL: ${artifact.url}`);
  return Buffer.from(artifact.url.slice(prefix.length), 'base64');
}

/** The RGB of the first pixel: IDAT is the chunk after IHDR (8 + 25 bytes in). */
function colourOf(png: Buffer): number[] {
  const idat = png.subarray(33 + 8, 33 + 8 + png.readUInt32BE(33));
  return [...inflateSync(idat).subarray(1, 4)];
}

describe('SimulatedImageProvider.generate', () => {
  it('when no directive is given and b64_json is asked, then an 8×8 PNG comes back at once, stamped with sentAt', async () => {
    const started = Date.now();
    const artifact = await provider.generate(call(undefined, { sentAt: SENT_AT }));
    const png = pngOf(artifact);
    expect(Date.now() - started).toBeLessThan(50);
    expect(Object.keys(artifact).sort()).toEqual(['b64Json', 'created']);
    expect(artifact.created).toBe(1_700_000_123);
    expect(png.subarray(0, 8).toString('latin1')).toBe('\x89PNG\r\n\x1a\n');
    expect([png.toString('latin1', 12, 16), png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual(['IHDR', SIM_IMAGE_SIZE, SIM_IMAGE_SIZE]);
  });

  it('when url is asked, then it is a PNG data URL of the same bytes as the b64_json form', async () => {
    const asUrl = await provider.generate(call(undefined, { responseFormat: 'url' }));
    const asB64 = await provider.generate(call());
    expect(asUrl.b64Json).toBeUndefined();
    expect(asUrl.url).toBe(`data:image/png;base64,${asB64.b64Json}`);
  });

  it('when the task and prompt are the same, then the bytes are the same; when the prompt differs, then the colour does', async () => {
    const first = pngOf(await provider.generate(call()));
    const again = pngOf(await provider.generate(call(undefined, { sentAt: 0 })));
    const other = pngOf(await provider.generate(call(undefined, { prompt: 'a blue fox' })));
    expect(again).toEqual(first);
    expect(colourOf(other)).not.toEqual(colourOf(first));
  });

  it('when reject is set, then it fails as rejected with 400', async () => {
    await expect(provider.generate(call({ reject: true }))).rejects.toMatchObject({ name: 'ProviderError', kind: 'rejected', upstreamStatus: 400 });
  });

  it('when fail-before-output is set, then it fails as unavailable with 503', async () => {
    await expect(provider.generate(call({ failBeforeOutput: true }))).rejects.toMatchObject({ kind: 'unavailable', upstreamStatus: 503 });
  });

  it('when hang is set and the timeout fires, then it fails as timeout', async () => {
    const started = Date.now();
    await expect(provider.generate(call({ hang: true }, { signal: AbortSignal.timeout(40) }))).rejects.toMatchObject({ kind: 'timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
  });

  it('when hang is set and the caller aborts for another reason, then it fails as protocol', async () => {
    const controller = new AbortController();
    const pending = provider.generate(call({ hang: true }, { signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('client gone')), 10);
    await expect(pending).rejects.toMatchObject({ kind: 'protocol' });
  });

  it('when late-artifact=80 is set, then the artifact comes no sooner than 80 ms after sentAt', async () => {
    const sentAt = Date.now();
    const artifact = await provider.generate(call({ lateArtifactMs: 80 }, { sentAt }));
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(75);
    expect(pngOf(artifact)).toEqual(pngOf(await provider.generate(call())));
  });

  it('when late-artifact outlasts the timeout, then it fails as timeout', async () => {
    await expect(provider.generate(call({ lateArtifactMs: 5000 }, { signal: AbortSignal.timeout(30) }))).rejects.toMatchObject({ kind: 'timeout' });
  });

  it('when the signal has already fired, then it fails without answering', async () => {
    const controller = new AbortController();
    controller.abort(new Error('shutdown'));
    await expect(provider.generate(call(undefined, { signal: controller.signal }))).rejects.toMatchObject({ kind: 'protocol' });
  });

  it('when built with options, then it takes their name and limit; without, then "sim" and 32 MiB', () => {
    const named = new SimulatedImageProvider({ name: 'sim-b', maxBodyBytes: 10 });
    expect([named.name, named.maxBodyBytes, provider.name, provider.maxBodyBytes]).toEqual(['sim-b', 10, 'sim', 33554432]);
  });
});

describe('SimulatedImageProvider.lookup', () => {
  it('when the call had no directive, then it succeeded with the artifact generate gives', async () => {
    const result = await provider.lookup(sent(undefined, { sentAt: SENT_AT }), notAborted());
    expect(result).toEqual({ status: 'succeeded', artifact: await provider.generate(call(undefined, { sentAt: SENT_AT })) });
  });

  it('when the call was rejected, then it failed', async () => {
    expect(await provider.lookup(sent({ reject: true }), notAborted())).toEqual({ status: 'failed', reason: expect.stringContaining('rejection') });
  });

  it('when the call failed before output, then it failed having produced nothing', async () => {
    expect(await provider.lookup(sent({ failBeforeOutput: true }), notAborted())).toEqual({ status: 'failed', reason: expect.stringContaining('produced nothing') });
  });

  it('when the call hangs, then it stays pending however long ago it was sent', async () => {
    expect(await provider.lookup(sent({ hang: true }, { sentAt: 0 }), notAborted())).toEqual({ status: 'pending' });
  });

  it('when a late artifact is not due yet, then it is pending; once due, then it succeeded', async () => {
    const early = await provider.lookup(sent({ lateArtifactMs: 60_000 }), notAborted());
    const due = await provider.lookup(sent({ lateArtifactMs: 60_000 }, { sentAt: Date.now() - 60_000, responseFormat: 'url' }), notAborted());
    expect(early).toEqual({ status: 'pending' });
    expect(due).toMatchObject({ status: 'succeeded', artifact: { url: expect.stringMatching(/^data:image\/png;base64,/) } });
  });

  it('when its signal has already fired, then the lookup fails as that abort', async () => {
    await expect(provider.lookup(sent(), AbortSignal.abort(new DOMException('late', 'TimeoutError')))).rejects.toMatchObject({ kind: 'timeout' });
  });
});
