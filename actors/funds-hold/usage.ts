// Usage lines as FundsHold prices and records them: exact integers, costed per line. A progress
// record keeps them as decimal strings (exact in any JSON state store).

import { GatewayError } from '../../lib/errors';
import { USAGE_UNITS, type UsageUnit } from '../../lib/events';
import { lineCost, parseAmount, toJsonAmount } from '../../lib/money';
import type { UsageLine } from './FundsHoldInterface';

const UNITS: ReadonlySet<string> = new Set<UsageUnit>(USAGE_UNITS);

/** A line as stored on a hold: quantity and unit price as decimal strings. */
export interface RecordedLine {
  unit: UsageUnit;
  quantity: string;
  unitPrice: string;
  /** Of the quantity (TEXT_OUTPUT): reasoning tokens. */
  reasoningTokens?: string;
}

export interface CostedLine {
  unit: UsageUnit;
  quantity: number;
  unitPrice: number;
  cost: number;
  reasoningTokens?: number;
}

/** Checks and records request lines (a bad line is refused, nothing changes). */
export function recordLines(lines: unknown): RecordedLine[] {
  if (!Array.isArray(lines)) throw new GatewayError('invalid_request', 'lines must be an array', { param: 'lines' });
  return lines.map((line: Partial<UsageLine> | null, i) => {
    if (typeof line !== 'object' || line === null || typeof line.unit !== 'string' || !UNITS.has(line.unit)) {
      throw new GatewayError('invalid_request', `lines[${i}].unit must be one of ${[...UNITS].join(', ')}`, { param: `lines[${i}].unit` });
    }
    const quantity = parseAmount(line.quantity);
    const recorded: RecordedLine = { unit: line.unit, quantity: quantity.toString(), unitPrice: parseAmount(line.unitPrice).toString() };
    if (line.reasoningTokens === undefined) return recorded;
    const reasoning = parseAmount(line.reasoningTokens);
    if (line.unit !== 'TEXT_OUTPUT' || reasoning > quantity) {
      throw new GatewayError('invalid_request', `lines[${i}].reasoningTokens is a part of a TEXT_OUTPUT line's quantity`, { param: `lines[${i}].reasoningTokens` });
    }
    return { ...recorded, reasoningTokens: reasoning.toString() };
  });
}

/** The lines with their costs, and the total. */
export function costed(lines: readonly RecordedLine[]): { lines: CostedLine[]; cost: bigint } {
  let cost = 0n;
  const out = lines.map((line) => {
    const each = lineCost(line.quantity, line.unitPrice);
    cost += each;
    const out: CostedLine = { unit: line.unit, quantity: toJsonAmount(BigInt(line.quantity)), unitPrice: toJsonAmount(BigInt(line.unitPrice)), cost: toJsonAmount(each) };
    return line.reasoningTokens === undefined ? out : { ...out, reasoningTokens: toJsonAmount(BigInt(line.reasoningTokens)) };
  });
  return { lines: out, cost };
}

/**
 * A newer progress record over an older one: per unit the newest line wins, but a quantity never
 * goes down (a retried or reordered record cannot undo what was recorded).
 */
export function mergeProgress(older: readonly RecordedLine[] | undefined, newer: readonly RecordedLine[]): RecordedLine[] {
  const byUnit = new Map<UsageUnit, RecordedLine>();
  for (const line of older ?? []) byUnit.set(line.unit, line);
  for (const line of newer) {
    const before = byUnit.get(line.unit);
    const quantity = before && BigInt(before.quantity) > BigInt(line.quantity) ? before.quantity : line.quantity;
    const reasoning = [before?.reasoningTokens, line.reasoningTokens].filter((r): r is string => r !== undefined).map(BigInt).reduce((a, b) => (a > b ? a : b), -1n);
    byUnit.set(line.unit, { unit: line.unit, quantity, unitPrice: line.unitPrice, ...(reasoning >= 0n ? { reasoningTokens: reasoning.toString() } : {}) });
  }
  return [...byUnit.values()];
}

/** What `usage` has beyond what was already `charged` for, per unit (never negative); empty lines dropped. */
export function beyond(usage: readonly RecordedLine[], charged: readonly RecordedLine[] | undefined): RecordedLine[] {
  const already = new Map<UsageUnit, bigint>();
  for (const line of charged ?? []) already.set(line.unit, (already.get(line.unit) ?? 0n) + BigInt(line.quantity));
  const out: RecordedLine[] = [];
  for (const line of usage) {
    const covered = already.get(line.unit) ?? 0n;
    const quantity = BigInt(line.quantity);
    const taken = covered < quantity ? covered : quantity;
    already.set(line.unit, covered - taken);
    if (quantity - taken > 0n) out.push({ unit: line.unit, quantity: (quantity - taken).toString(), unitPrice: line.unitPrice });
  }
  return out;
}
