// Usage lines as FundsHold prices and records them: exact integers, costed per line. A progress
// record keeps them as decimal strings (exact in any JSON state store).

import { GatewayError } from '../../lib/errors';
import { USAGE_UNITS, type UsageUnit } from '../../lib/events';
import { lineCost, MAX_SAFE, MoneyError, parseAmount, toJsonAmount } from '../../lib/money';
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

/** A line's whole number (quantity, unit price, reasoning tokens), or invalid_request naming it: never a MoneyError, which would read as a fault to retry. */
function lineNumber(value: unknown, param: string): bigint {
  try {
    return parseAmount(value);
  } catch (error) {
    if (!(error instanceof MoneyError)) throw error;
    throw new GatewayError('invalid_request', `${param} must be a whole number from 0 to 2^53-1`, { param });
  }
}

/**
 * Checks and records request lines (a bad line is refused, nothing changes). A line whose cost
 * (quantity × unit price) no amount can hold is refused too: recorded, it could never be costed,
 * and a hold's expiry that costs it would fail on every turn of the actor.
 */
export function recordLines(lines: unknown): RecordedLine[] {
  if (!Array.isArray(lines)) throw new GatewayError('invalid_request', 'lines must be an array', { param: 'lines' });
  return lines.map((line: Partial<UsageLine> | null, i) => {
    if (typeof line !== 'object' || line === null || typeof line.unit !== 'string' || !UNITS.has(line.unit)) {
      throw new GatewayError('invalid_request', `lines[${i}].unit must be one of ${[...UNITS].join(', ')}`, { param: `lines[${i}].unit` });
    }
    const quantity = lineNumber(line.quantity, `lines[${i}].quantity`);
    const unitPrice = lineNumber(line.unitPrice, `lines[${i}].unitPrice`);
    if (lineCost(quantity.toString(), unitPrice.toString()) > MAX_SAFE) {
      throw new GatewayError('invalid_request', `lines[${i}] costs more than 2^53-1 nano-USD (${quantity} × ${unitPrice})`, { param: `lines[${i}].quantity` });
    }
    const recorded: RecordedLine = { unit: line.unit, quantity: quantity.toString(), unitPrice: unitPrice.toString() };
    if (line.reasoningTokens === undefined) return recorded;
    const reasoning = lineNumber(line.reasoningTokens, `lines[${i}].reasoningTokens`);
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
