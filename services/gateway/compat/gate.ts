// The one gate in front of the standard-compatibility routes (/v1/models, /v1/chat/completions,
// /v1/messages, /v1/embeddings). Its conditions are data, checked in this order; the first that fails refuses
// the request with 403 and its own code, so a client learns exactly what to fix:
//   deployment  the operator enabled the routes (GATEWAY_COMPAT_ENABLED=true)
//   scope       the API key carries the "compat" scope
//   model_price the model asked for has an eligible price of what the route bills (status ready,
//               explicit price): TEXT_OUTPUT for a chat, TEXT_INPUT for embeddings
//   funded      the account's available pool-3 balance is above zero
// Behind the gate the routes bill pool-3 exactly like the open routes (docs/compat.md).

import { DEFAULT_POOL } from '../../../actors/funds-hold/FundsHoldInterface';
import type { FundsHoldClient } from '../../../actors/funds-hold/client';
import { eligibility, type CatalogModel } from '../../../catalog/catalog';
import type { PricedOperation } from '../../../catalog/schema';
import { GatewayError, type ErrorCode } from '../../../lib/errors';
import type { Caller } from '../middleware/auth';

export const COMPAT_SCOPE = 'compat';

export type CompatCondition = 'deployment' | 'scope' | 'model_price' | 'funded';

export interface CompatConditionSpec {
  condition: CompatCondition;
  code: ErrorCode;
  requires: string;
  /** Where its state is known: the deployment alone, or only per call. */
  decidedBy: 'deployment' | 'credential' | 'model' | 'account';
}

export const COMPAT_GATE: readonly CompatConditionSpec[] = [
  { condition: 'deployment', code: 'compat_disabled', requires: 'the deployment enables the compatibility routes (GATEWAY_COMPAT_ENABLED=true)', decidedBy: 'deployment' },
  { condition: 'scope', code: 'compat_scope_required', requires: `the API key carries the "${COMPAT_SCOPE}" scope`, decidedBy: 'credential' },
  { condition: 'model_price', code: 'compat_model_not_eligible', requires: 'the model has an eligible price (status ready with an explicit price) of what the route bills: TEXT_OUTPUT for a chat, TEXT_INPUT for embeddings', decidedBy: 'model' },
  { condition: 'funded', code: 'compat_account_unfunded', requires: 'the account has an available pool-3 balance above zero', decidedBy: 'account' },
];

function refuse(condition: CompatCondition, detail: string): never {
  const spec = COMPAT_GATE.find((c) => c.condition === condition)!;
  throw new GatewayError(spec.code, `compatibility gate closed (${condition}): ${detail}; requires ${spec.requires}`, { extra: { gate: 'compat', condition } });
}

export class CompatGate {
  constructor(private readonly enabled: boolean, private readonly funds: FundsHoldClient) {}

  get open(): boolean {
    return this.enabled;
  }

  /** The conditions known before the request is read: the deployment and the credential. */
  admit(caller: Caller): void {
    if (!this.enabled) refuse('deployment', 'the compatibility routes are disabled on this deployment');
    if (!caller.scopes.has(COMPAT_SCOPE)) refuse('scope', `this API key does not carry the "${COMPAT_SCOPE}" scope`);
  }

  /** The model's condition, for the operation the route bills. */
  admitModel(model: CatalogModel, operation: PricedOperation = 'TEXT_OUTPUT'): void {
    const price = eligibility(model, operation);
    if (!price.eligible) refuse('model_price', `model ${model.id}: ${price.reason}`);
  }

  /** The account's condition: one balance read. */
  async admitAccount(caller: Caller): Promise<void> {
    const view = await this.funds.of(caller.accountId, DEFAULT_POOL).getBalance();
    if (view.available <= 0) refuse('funded', `the account's available pool-3 balance is ${view.available}`);
  }
}

/** The gate as the anonymous readiness report states it. */
export function compatReadiness(enabled: boolean, models: readonly CatalogModel[]) {
  return {
    path_prefix: '/v1',
    routes: ['GET /v1/models', 'GET /v1/models/{id}', 'POST /v1/chat/completions', 'POST /v1/messages', 'POST /v1/messages/count_tokens', 'POST /v1/embeddings'],
    funding_pool: DEFAULT_POOL,
    open: enabled,
    conditions: COMPAT_GATE.map((c) => ({
      condition: c.condition,
      code: c.code,
      requires: c.requires,
      state: c.decidedBy === 'deployment' ? (enabled ? 'passes' : 'fails') : `checked per call (${c.decidedBy})`,
    })),
    eligible_models: models.filter((m) => eligibility(m, 'TEXT_OUTPUT').eligible || servesEmbeddings(m)).map((m) => m.id),
  };
}

/** Whether the embeddings route serves the model: an embeddings profile and an eligible TEXT_INPUT price. */
export function servesEmbeddings(model: CatalogModel): boolean {
  return model.profiles.some((p) => p.wire_format === 'openai-embeddings') && eligibility(model, 'TEXT_INPUT').eligible;
}
