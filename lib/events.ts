// The shared event envelope. Every event has a deterministic id, so a redelivery is
// recognised by the ledger and never doubles an entry.

export const TOPICS = ['billing', 'usage'] as const;
export type Topic = (typeof TOPICS)[number];

export type BillingKind = 'credit' | 'hold' | 'charge' | 'release' | 'platform_borne';
export type UsageUnit = 'TEXT_INPUT' | 'TEXT_OUTPUT' | 'IMAGE' | 'SECOND';

export interface BillingData {
  kind: BillingKind;
  accountId: string;
  pool: string;
  /** Signed change of the balance in minor units (credit +, charge −; hold and release 0). */
  balanceDelta: number;
  /** The amount the entry is about (the hold amount for hold/release, the charge for charge). */
  amount: number;
  holdId?: string;
  reference?: string;
  requestId?: string;
  model?: string;
  profileId?: string;
}

export interface UsageData {
  accountId: string;
  pool: string;
  holdId: string;
  requestId: string;
  model: string;
  profileId: string;
  lines: { unit: UsageUnit; quantity: number; unitPrice: number; cost: number }[];
  /** What the customer is charged for these lines (may be 0 when the platform bears the cost). */
  charged: number;
}

export interface EventEnvelope<T = BillingData | UsageData> {
  id: string;
  topic: Topic;
  type: string;
  occurredAt: string;
  source: string;
  data: T;
  traceparent?: string;
}

export function billingEvent(id: string, occurredAtMs: number, data: BillingData, source = 'FundsHold'): EventEnvelope<BillingData> {
  return { id, topic: 'billing', type: `billing.${data.kind}`, occurredAt: new Date(occurredAtMs).toISOString(), source, data };
}

export function usageEvent(id: string, occurredAtMs: number, data: UsageData, source = 'FundsHold'): EventEnvelope<UsageData> {
  return { id, topic: 'usage', type: 'usage.recorded', occurredAt: new Date(occurredAtMs).toISOString(), source, data };
}
