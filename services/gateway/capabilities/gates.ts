// Capability gates (docs/capabilities.md: Agent Run, signing, evidence and media each need their own source,
// scopes, price and delivery gates). Each capability is data: the source that must offer it,
// the credential scopes it needs, the priced operation whose price must be eligible, and the
// delivery channel the operator must have accepted. A use is refused until all four pass,
// naming the first that fails, in this order: source, scopes, price, delivery.
// Readiness here is a candidate contract, not production enablement or provider acceptance.

import { eligibility, type Catalog, type CatalogModel, type CatalogProfile } from '../../../catalog/catalog';
import type { PricedOperation } from '../../../catalog/schema';
import { GatewayError } from '../../../lib/errors';

export const CAPABILITIES = ['agent_run', 'signing', 'evidence', 'media'] as const;
export type Capability = (typeof CAPABILITIES)[number];
export type GateName = 'source' | 'scopes' | 'price' | 'delivery';
export const GATE_ORDER: readonly GateName[] = ['source', 'scopes', 'price', 'delivery'];

export interface CapabilitySpec {
  /** A catalog profile of the model must list this tag in its `capabilities` (the provider offers it). */
  source: { profileCapability: string };
  /** Every one of these scopes on the credential (API key scopes or the token's scope claim). */
  scopes: readonly string[];
  /** The model's price status for this operation must be ready, with an explicit price. */
  price: { operation: PricedOperation };
  /** The channel the capability's result is delivered through, accepted by the operator. */
  delivery: { channel: string };
}

export const CAPABILITY_GATES: Readonly<Record<Capability, CapabilitySpec>> = {
  agent_run: { source: { profileCapability: 'agent_run' }, scopes: ['agent_run'], price: { operation: 'AGENT_RUN' }, delivery: { channel: 'session_events' } },
  signing: { source: { profileCapability: 'signing' }, scopes: ['signing'], price: { operation: 'SIGNATURE' }, delivery: { channel: 'response_header' } },
  evidence: { source: { profileCapability: 'evidence' }, scopes: ['evidence'], price: { operation: 'EVIDENCE' }, delivery: { channel: 'evidence_export' } },
  media: { source: { profileCapability: 'media' }, scopes: ['media'], price: { operation: 'MEDIA' }, delivery: { channel: 'artifact_url' } },
};

export function isCapability(value: string): value is Capability {
  return (CAPABILITIES as readonly string[]).includes(value);
}

/**
 * The operator's accepted delivery channels, `GATEWAY_CAPABILITY_DELIVERY`:
 * `<capability>:<channel>` pairs, comma separated. A pair naming an unknown capability or a
 * channel the capability does not deliver through is a configuration error.
 */
export function parseDeliveryConfig(text: string): ReadonlySet<Capability> {
  const accepted = new Set<Capability>();
  for (const raw of text.split(',')) {
    const pair = raw.trim();
    if (pair === '') continue;
    const [capability, channel, ...rest] = pair.split(':').map((s) => s.trim());
    if (!capability || !isCapability(capability) || rest.length > 0) {
      throw new Error(`GATEWAY_CAPABILITY_DELIVERY: "${pair}" names no capability (known: ${CAPABILITIES.join(', ')})`);
    }
    const expected = CAPABILITY_GATES[capability].delivery.channel;
    if (channel !== expected) throw new Error(`GATEWAY_CAPABILITY_DELIVERY: ${capability} is delivered through "${expected}", not "${channel ?? ''}"`);
    accepted.add(capability);
  }
  return accepted;
}

export type GateState = { gate: GateName; passes: true } | { gate: GateName; passes: false; reason: string };

export interface GateContext {
  model: CatalogModel;
  /** The profile that serves the call: only it can be the capability's source. */
  profile: CatalogProfile;
  /** The provider entries this deployment configured (a profile of another is no source). */
  providers: ReadonlySet<string>;
  scopes: ReadonlySet<string>;
  accepted: ReadonlySet<Capability>;
}

function offers(spec: CapabilitySpec, profile: CatalogProfile, providers: ReadonlySet<string>): boolean {
  return profile.capabilities.includes(spec.source.profileCapability) && profile.upstreams.some((upstream) => providers.has(upstream.provider));
}

function sourceProfile(spec: CapabilitySpec, model: CatalogModel, providers: ReadonlySet<string>): CatalogProfile | undefined {
  return model.profiles.find((p) => offers(spec, p, providers));
}

/** Every gate of one capability for one model and credential, in order. */
export function evaluate(capability: Capability, ctx: GateContext): GateState[] {
  const spec = CAPABILITY_GATES[capability];
  const missing = spec.scopes.filter((s) => !ctx.scopes.has(s));
  const price = eligibility(ctx.model, spec.price.operation);
  return [
    offers(spec, ctx.profile, ctx.providers)
      ? { gate: 'source', passes: true }
      : { gate: 'source', passes: false, reason: `profile ${ctx.profile.profile_id} of model ${ctx.model.id}, which serves this call, does not offer "${spec.source.profileCapability}"` },
    missing.length === 0 ? { gate: 'scopes', passes: true } : { gate: 'scopes', passes: false, reason: `the credential lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}` },
    price.eligible ? { gate: 'price', passes: true } : { gate: 'price', passes: false, reason: price.reason },
    ctx.accepted.has(capability)
      ? { gate: 'delivery', passes: true }
      : { gate: 'delivery', passes: false, reason: `the delivery channel "${spec.delivery.channel}" is not accepted on this deployment` },
  ];
}

/** Refuses the use unless all four gates pass, naming the first that fails. */
export function requireCapability(capability: Capability, ctx: GateContext): void {
  const closed = evaluate(capability, ctx).find((s): s is Extract<GateState, { passes: false }> => !s.passes);
  if (closed) {
    throw new GatewayError('capability_gate_closed', `${capability} is not available: its ${closed.gate} gate is closed (${closed.reason})`, {
      // The request's parameter at fault is the header that asked for it; `gate` names the gate.
      param: 'X-Payg-Capabilities',
      extra: { capability, gate: closed.gate },
    });
  }
}

/**
 * The capabilities a request asks to use: header `X-Payg-Capabilities`, comma separated.
 * An unknown name is a 400; an absent header asks for none.
 */
export function requestedCapabilities(header: string | string[] | undefined): Capability[] {
  if (header === undefined) return [];
  const names = (Array.isArray(header) ? header.join(',') : header).split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  const unknown = names.filter((n) => !isCapability(n));
  if (unknown.length > 0) {
    throw new GatewayError('invalid_request', `X-Payg-Capabilities: unknown capabilit${unknown.length > 1 ? 'ies' : 'y'} ${unknown.join(', ')} (known: ${CAPABILITIES.join(', ')})`, { param: 'X-Payg-Capabilities' });
  }
  return [...new Set(names as Capability[])];
}

/** The gates as the anonymous readiness report states them: per capability, per gate. */
export function capabilityReadiness(catalog: Catalog, providers: ReadonlySet<string>, accepted: ReadonlySet<Capability>) {
  const models = catalog.models();
  return Object.fromEntries(CAPABILITIES.map((capability) => {
    const spec = CAPABILITY_GATES[capability];
    const sources = models.filter((m) => sourceProfile(spec, m, providers)).map((m) => m.id);
    const priced = models.filter((m) => eligibility(m, spec.price.operation).eligible).map((m) => m.id);
    const readyModels = sources.filter((id) => priced.includes(id));
    return [capability, {
      gates: {
        source: { requires: `a catalog profile listing "${spec.source.profileCapability}" with a configured provider`, passes: sources.length > 0, models: sources },
        scopes: { requires: spec.scopes, passes: 'checked per credential' },
        price: { requires: `${spec.price.operation} pricing status ready with an explicit price`, passes: priced.length > 0, models: priced },
        delivery: { requires: `delivery channel "${spec.delivery.channel}" accepted by the operator (GATEWAY_CAPABILITY_DELIVERY)`, passes: accepted.has(capability) },
      },
      /** Models where every gate a deployment decides passes; the scopes gate is the credential's. */
      ready_models: accepted.has(capability) ? readyModels : [],
      ready: accepted.has(capability) && readyModels.length > 0,
    }];
  }));
}
