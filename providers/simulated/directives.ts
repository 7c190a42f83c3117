// The `X-Sim-Directive` header: per-request behaviour of the simulated provider.
//
//   header    = directive *( ( ";" / "," ) directive )     whitespace around tokens ignored
//   directive = "fail-before-output" | "reject" | "hang"
//             | "late-artifact=" ms | "stream-delay=" ms | "tokens=" n | "fail-after-chunks=" n
//   ms, n     = 1*DIGIT                                    a non-negative safe integer
//
// Names are case-insensitive. Unknown names, a value on a flag, a missing or non-integer
// value, and a directive given twice are all refused: the gateway answers 400.

import type { SimDirectives } from '../port';

export class SimDirectiveError extends Error {
  constructor(
    readonly directive: string,
    message: string,
  ) {
    super(message);
    this.name = 'SimDirectiveError';
  }
}

type FlagKey = 'failBeforeOutput' | 'reject' | 'hang';
type NumberKey = 'lateArtifactMs' | 'streamDelayMs' | 'outputTokens' | 'failAfterChunks';

const FLAGS: Record<string, FlagKey> = {
  'fail-before-output': 'failBeforeOutput',
  reject: 'reject',
  hang: 'hang',
};

const NUMBERS: Record<string, NumberKey> = {
  'late-artifact': 'lateArtifactMs',
  'stream-delay': 'streamDelayMs',
  tokens: 'outputTokens',
  'fail-after-chunks': 'failAfterChunks',
};

const KNOWN = [...Object.keys(FLAGS), ...Object.keys(NUMBERS)].join(', ');

export function parseSimDirectives(header: string | undefined): SimDirectives {
  const directives: SimDirectives = {};
  if (header === undefined) return directives;
  const seen = new Set<string>();
  for (const part of header.split(/[;,]/)) {
    const text = part.trim();
    if (text === '') continue;
    const eq = text.indexOf('=');
    const name = (eq === -1 ? text : text.slice(0, eq)).trim().toLowerCase();
    const value = eq === -1 ? undefined : text.slice(eq + 1).trim();
    if (seen.has(name)) throw new SimDirectiveError(name, `sim directive "${name}" is given more than once`);
    seen.add(name);
    if (Object.hasOwn(FLAGS, name)) {
      if (value !== undefined) throw new SimDirectiveError(name, `sim directive "${name}" takes no value`);
      directives[FLAGS[name]] = true;
    } else if (Object.hasOwn(NUMBERS, name)) {
      directives[NUMBERS[name]] = parseCount(name, value);
    } else {
      throw new SimDirectiveError(name, `unknown sim directive "${name}" (known: ${KNOWN})`);
    }
  }
  return directives;
}

function parseCount(name: string, value: string | undefined): number {
  if (value === undefined || value === '') {
    throw new SimDirectiveError(name, `sim directive "${name}" needs a value, as in ${name}=10`);
  }
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) {
    throw new SimDirectiveError(name, `sim directive "${name}" needs a non-negative integer, got "${value}"`);
  }
  return n;
}
