// The simulated images provider: a real adapter behind the port, deterministic, no network.
//
// The image is an 8×8 PNG of one colour, taken from a SHA-256 of the task id and prompt, so
// the same call always gives the same bytes: as base64 for b64_json, as a data: URL for url.
// `created` is the call's sentAt in seconds.
//
// Directives (first that applies): reject → rejected (400); fail-before-output → unavailable
// (503); hang → no answer until the signal fires; late-artifact=N → the artifact is ready at
// sentAt + N. A fired signal fails the call as abort.ts says (timeout or protocol).
//
// lookup() derives the outcome from the call as it was sent (directives, sentAt) alone, so it
// answers the same after a restart: what generate() gave or would give by now.

import { createHash } from 'node:crypto';
import { abortableDelay, abortedCallError, untilAborted } from '../abort';
import { ProviderError, type ImageArtifact, type ImageCall, type ImageLookup, type ImageProvider } from '../port';
import { SimulatedAdapter, type SimulatedProviderOptions } from './adapter';
import { solidPng } from './png';

export const SIM_IMAGE_SIZE = 8;

export type SimulatedImageProviderOptions = SimulatedProviderOptions;

type SentCall = Omit<ImageCall, 'signal'>;

/** What the simulated upstream does with a call. */
type Outcome =
  | { kind: 'rejected' }
  | { kind: 'failed' }
  | { kind: 'hang' }
  /** The artifact exists from `readyAt` (ms since the epoch) on. */
  | { kind: 'ready'; readyAt: number };

export class SimulatedImageProvider extends SimulatedAdapter implements ImageProvider {
  async generate(call: ImageCall): Promise<ImageArtifact> {
    if (call.signal.aborted) throw abortedCallError(call.signal);
    const outcome = outcomeOf(call);
    switch (outcome.kind) {
      case 'rejected':
        throw new ProviderError('rejected', 'simulated rejection', 400, undefined, { detail: 'simulated rejection' });
      case 'failed':
        throw new ProviderError('unavailable', 'simulated failure before output', 503);
      case 'hang':
        return untilAborted(call.signal);
      case 'ready': {
        const wait = outcome.readyAt - Date.now();
        if (wait > 0) await abortableDelay(wait, call.signal);
        return artifactOf(call);
      }
    }
  }

  async lookup(call: SentCall, signal: AbortSignal): Promise<ImageLookup> {
    if (signal.aborted) throw abortedCallError(signal);
    const outcome = outcomeOf(call);
    switch (outcome.kind) {
      case 'rejected':
        return { status: 'failed', reason: 'simulated rejection: nothing was produced' };
      case 'failed':
        return { status: 'failed', reason: 'simulated failure before output: the upstream produced nothing' };
      case 'hang':
        return { status: 'pending' };
      case 'ready':
        return Date.now() < outcome.readyAt ? { status: 'pending' } : { status: 'succeeded', artifact: artifactOf(call) };
    }
  }
}

function outcomeOf(call: SentCall): Outcome {
  const d = call.directives ?? {};
  if (d.reject) return { kind: 'rejected' };
  if (d.failBeforeOutput) return { kind: 'failed' };
  if (d.hang) return { kind: 'hang' };
  return { kind: 'ready', readyAt: call.sentAt + (d.lateArtifactMs ?? 0) };
}

function artifactOf(call: SentCall): ImageArtifact {
  const digest = createHash('sha256').update(call.taskId).update('\0').update(call.prompt).digest();
  const base64 = solidPng(SIM_IMAGE_SIZE, SIM_IMAGE_SIZE, [digest[0], digest[1], digest[2]]).toString('base64');
  const created = Math.floor(call.sentAt / 1000);
  return call.responseFormat === 'b64_json' ? { b64Json: base64, created } : { url: `data:image/png;base64,${base64}`, created };
}
