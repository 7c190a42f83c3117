// Each upstream's health, as this gateway instance sees it (docs/providers.md, "Routing"): a
// circuit per provider entry. Consecutive failures open it for a cooldown (a 429's Retry-After,
// when longer, instead); once the cooldown has passed it is half-open and the next real request
// is its probe, one at a time; the probe's success closes it, its failure opens it again.
//
// An open circuit only orders: its upstream is tried after every healthy one, as a last resort,
// so a profile whose every upstream is failing is still tried rather than refused. On the Dapr
// topology each gateway instance keeps its own circuits (health is not money: an instance that
// has not seen the failures yet only tries the upstream once more).

export type CircuitState = 'closed' | 'open' | 'half_open';

export interface CircuitSettings {
  /** Consecutive failures that open a circuit. */
  failures: number;
  /** How long an open circuit stays open before a probe. */
  cooldownMs: number;
}

export const DEFAULT_CIRCUIT: CircuitSettings = { failures: 5, cooldownMs: 30_000 };

interface Circuit {
  failures: number;
  /** Open until then (ms since the epoch); 0: closed. */
  openUntil: number;
  /** A half-open circuit's probe is in flight. */
  probing: boolean;
}

export interface CircuitView {
  state: CircuitState;
  consecutive_failures: number;
  /** When an open circuit's cooldown ends (ISO 8601); null when closed. */
  open_until: string | null;
}

/** What an upstream candidate needs for ordering: its name and weight. */
export interface Weighted {
  provider: string;
  weight: number;
}

export class UpstreamHealth {
  private readonly circuits = new Map<string, Circuit>();
  /** Each profile's round-robin state: the current weight of each of its upstreams. */
  private readonly rotations = new Map<string, Map<string, number>>();

  constructor(
    private readonly settings: CircuitSettings = DEFAULT_CIRCUIT,
    private readonly now: () => number = Date.now,
  ) {}

  private circuit(provider: string): Circuit {
    let circuit = this.circuits.get(provider);
    if (!circuit) {
      circuit = { failures: 0, openUntil: 0, probing: false };
      this.circuits.set(provider, circuit);
    }
    return circuit;
  }

  state(provider: string): CircuitState {
    const circuit = this.circuits.get(provider);
    if (!circuit || circuit.openUntil === 0) return 'closed';
    return this.now() < circuit.openUntil ? 'open' : 'half_open';
  }

  /** True when a request may go to the upstream now, not as a last resort: closed, or half-open with no probe in flight. */
  private available(provider: string): boolean {
    const state = this.state(provider);
    return state === 'closed' || (state === 'half_open' && !this.circuit(provider).probing);
  }

  /**
   * The order to try a profile's upstreams in (`key`: the profile): first the pick of a smooth
   * weighted round robin over the available ones (nginx's: over any run of requests each gets its
   * share of first attempts, spread evenly, deterministically), then the other available ones by
   * weight, then the unavailable ones, the soonest to reopen first.
   */
  order<T extends Weighted>(key: string, candidates: readonly T[]): T[] {
    const available = candidates.filter((c) => this.available(c.provider));
    const rest = candidates.filter((c) => !this.available(c.provider)).sort((a, b) => this.circuit(a.provider).openUntil - this.circuit(b.provider).openUntil);
    if (available.length === 0) return rest;
    let current = this.rotations.get(key);
    if (!current) this.rotations.set(key, (current = new Map()));
    let total = 0;
    let first = available[0];
    for (const candidate of available) {
      total += candidate.weight;
      current.set(candidate.provider, (current.get(candidate.provider) ?? 0) + candidate.weight);
      if (current.get(candidate.provider)! > current.get(first.provider)!) first = candidate;
    }
    current.set(first.provider, current.get(first.provider)! - total);
    const others = available.filter((c) => c !== first).sort((a, b) => b.weight - a.weight);
    return [first, ...others, ...rest];
  }

  /** An attempt is about to go to the upstream: a half-open circuit's attempt is its probe. */
  attempting(provider: string): void {
    if (this.state(provider) === 'half_open') this.circuit(provider).probing = true;
  }

  /** The upstream answered (first byte of a 2xx): its circuit closes. */
  succeeded(provider: string): void {
    const circuit = this.circuit(provider);
    circuit.failures = 0;
    circuit.openUntil = 0;
    circuit.probing = false;
  }

  /**
   * The upstream failed (refused, 5xx, 429, no first byte in time, or broke mid-stream): a failed
   * probe reopens the circuit; enough consecutive failures open it. `retryAfterMs`: how long the
   * upstream asked to be left alone (a 429's Retry-After), which opens it at once for that long.
   */
  failed(provider: string, retryAfterMs?: number): void {
    const circuit = this.circuit(provider);
    const was = this.state(provider);
    circuit.failures += 1;
    circuit.probing = false;
    // Opened by a failed probe or enough failures for the cooldown, by a Retry-After for as long as it says; the longer wins.
    const opens = was === 'half_open' || circuit.failures >= this.settings.failures;
    const length = Math.max(opens ? this.settings.cooldownMs : 0, retryAfterMs ?? 0);
    if (length > 0) circuit.openUntil = Math.max(circuit.openUntil, this.now() + length);
  }

  /** Each named upstream's state (for the metrics gauge). */
  states(names: Iterable<string>): Record<string, CircuitState> {
    const out: Record<string, CircuitState> = {};
    for (const name of names) out[name] = this.state(name);
    return out;
  }

  /** Each named upstream's circuit (for /readyz). */
  view(names: Iterable<string>): Record<string, CircuitView> {
    const out: Record<string, CircuitView> = {};
    for (const name of names) {
      const circuit = this.circuits.get(name);
      const state = this.state(name);
      out[name] = { state, consecutive_failures: circuit?.failures ?? 0, open_until: state === 'closed' ? null : new Date(circuit!.openUntil).toISOString() };
    }
    return out;
  }
}
