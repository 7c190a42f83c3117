// The operator API in the OpenAPI document, generated from the zod schemas its routes parse with
// (routes/admin-schemas.ts). Every route takes the operator token.

import {
  accountAnswer, accountBody, accountDetailAnswer, accountListAnswer, accountSummaryAnswer, apiKeyAnswer, apiKeyBody, apiKeyListAnswer, auditListAnswer,
  apiKeyItem, creditAnswer, creditBody, debitBody, limitsBody, reconciliationAnswer, repairAnswer, rotateBody, rotatedKeyAnswer,
} from './routes/admin-schemas';
import { orderIdempotencyKey } from './openapi-orders';
import { AUDIT_ACTIONS } from './accounts/audit';
import { MAX_JOURNAL_SCAN } from '../../actors/journal/JournalInterface';
import { BODY_400, BODY_413, BODY_415, CREDENTIAL_400, errorAnswer, jsonSchemaOf, UNAVAILABLE } from './openapi-answers';

export const adminSecuritySchemes = {
  adminToken: { type: 'http', scheme: 'bearer', description: 'The operator token: Authorization: Bearer $GATEWAY_ADMIN_TOKEN' },
};

export const adminSchemas = {
  AccountRequest: jsonSchemaOf(accountBody, 'input'),
  Account: jsonSchemaOf(accountAnswer, 'output'),
  ApiKeyRequest: jsonSchemaOf(apiKeyBody, 'input'),
  ApiKeyCreated: jsonSchemaOf(apiKeyAnswer, 'output'),
  ApiKeyList: jsonSchemaOf(apiKeyListAnswer, 'output'),
  RotateRequest: jsonSchemaOf(rotateBody, 'input'),
  ApiKeyRotated: jsonSchemaOf(rotatedKeyAnswer, 'output'),
  AccountSummary: jsonSchemaOf(accountSummaryAnswer, 'output'),
  AccountList: jsonSchemaOf(accountListAnswer, 'output'),
  AccountDetail: jsonSchemaOf(accountDetailAnswer, 'output'),
  DebitRequest: jsonSchemaOf(debitBody, 'input'),
  LimitsRequest: jsonSchemaOf(limitsBody, 'input'),
  ApiKey: jsonSchemaOf(apiKeyItem, 'output'),
  AuditList: jsonSchemaOf(auditListAnswer, 'output'),
  CreditRequest: jsonSchemaOf(creditBody, 'input'),
  Credit: jsonSchemaOf(creditAnswer, 'output'),
  Reconciliation: jsonSchemaOf(reconciliationAnswer, 'output'),
  Repair: jsonSchemaOf(repairAnswer, 'output'),
};

const admin = [{ adminToken: [] }];
const json = (name: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } });
const body = (name: string) => ({ required: true, content: json(name) });
const answer = (description: string, name: string) => ({ description, content: json(name) });
const accountId = { name: 'accountId', in: 'path', required: true, schema: { type: 'string' } };
/** Every operator route: the token, and what any route may refuse. */
const refusals = {
  '400': errorAnswer(`invalid_request naming the field, ${BODY_400}, ${CREDENTIAL_400}`),
  '401': errorAnswer('unauthorized: the operator token is missing or wrong'),
  '403': errorAnswer('admin_disabled: GATEWAY_ADMIN_TOKEN is not set'),
  '413': errorAnswer(`${BODY_413} (64 KiB)`),
  '415': errorAnswer(BODY_415),
  '503': errorAnswer(UNAVAILABLE),
};
/**
 * A route that takes no body still reads one sent anyway (the operator router reads a JSON body on
 * every route, before the route is known): a non-JSON Content-Type is 415, a body past 64 KiB 413.
 */
const withoutBody = {
  ...refusals,
  '413': errorAnswer(`${BODY_413}: a body was sent anyway, past 64 KiB (this route takes none)`),
  '415': errorAnswer(`${BODY_415}; also when no body is sent but Content-Type names another type (this route takes no body)`),
};
const apiKeyId = { name: 'apiKeyId', in: 'path', required: true, schema: { type: 'string' } };
const query = (name: string, schema: Record<string, unknown>, description: string) => ({ name, in: 'query', required: false, schema, description });
/** One audit action's name, as a regular expression. */
const ACTION_NAME = AUDIT_ACTIONS.map((name) => name.replaceAll('.', '\\.')).join('|');
const paging = [
  query('limit', { type: 'integer', minimum: 1, maximum: 100, default: 20 }, 'Items per page'),
  query('before', { type: 'string', pattern: '^(0|[1-9][0-9]{0,15})$' }, "A previous page's `next`"),
];
const optionalBody = (name: string) => ({ required: false, content: json(name) });
const emptyBody = { required: false, content: { 'application/json': { schema: { type: 'object', additionalProperties: false } } } };
const keyNotFound = errorAnswer('api_key_not_found: no key with this id');
/** A new key (made or a successor) past the account's keys, revoked ones counted. */
const KEY_LIMIT = 'api_key_limit_reached: the account already holds 1,000 API keys, revoked ones included; nothing is made';
const accountNotFound = errorAnswer('account_not_found');

export const adminPaths = {
  '/admin/v1/accounts': {
    post: { summary: 'Create an account (both pools start at zero)', security: admin, requestBody: body('AccountRequest'), responses: { '201': answer('The account', 'Account'), ...refusals } },
    get: {
      summary: 'The accounts, newest first, in pages; optionally only those whose name contains a text', security: admin,
      parameters: [...paging, query('name', { type: 'string', minLength: 1, maxLength: 200 }, 'Only accounts whose name contains this, compared without case')],
      responses: { '200': answer('A page of accounts', 'AccountList'), ...withoutBody },
    },
  },
  '/admin/v1/accounts/{accountId}': {
    get: {
      summary: 'An account: its pools (balance, held, available, leased), its keys and whether it is suspended', security: admin, parameters: [accountId],
      responses: { '200': answer('The account', 'AccountDetail'), ...withoutBody, '404': accountNotFound },
    },
    patch: {
      summary: "Set the account's limits (over all its keys and credentials): rates kept by its Account actor per minute, spend kept by its FundsHold with open holds counted", security: admin, parameters: [accountId], requestBody: body('LimitsRequest'),
      responses: { '200': answer('The account with its limits', 'AccountSummary'), ...refusals, '404': accountNotFound },
    },
  },
  '/admin/v1/accounts/{accountId}/suspend': {
    post: {
      summary: "Suspend the account: its calls are refused 403 account_suspended on every instance within a second; its calls already running end and are charged as usual", security: admin, parameters: [accountId], requestBody: emptyBody,
      responses: { '200': answer('The account, suspendedAt set (a repeat changes nothing)', 'AccountSummary'), ...refusals, '404': accountNotFound },
    },
  },
  '/admin/v1/accounts/{accountId}/unsuspend': {
    post: {
      summary: 'Lift a suspension', security: admin, parameters: [accountId], requestBody: emptyBody,
      responses: { '200': answer('The account, suspendedAt null', 'AccountSummary'), ...refusals, '404': accountNotFound },
    },
  },
  '/admin/v1/accounts/{accountId}/debits': {
    post: {
      summary: 'An operator correction: takes the amount off a pool through its FundsHold actor and the ledger, once per reference, never more than is available', security: admin, parameters: [accountId], requestBody: body('DebitRequest'),
      responses: {
        '200': answer('The debit and the balance after it', 'Credit'), ...refusals,
        '402': errorAnswer('insufficient_funds: the amount exceeds what is available (balance less open holds and leases); nothing moved'),
        '404': accountNotFound,
        '409': errorAnswer('debit_reference_reused: the reference was applied before with another amount; nothing moved'),
      },
    },
  },
  '/admin/v1/accounts/{accountId}/api-keys': {
    get: {
      summary: "The account's keys, newest first: never the keys themselves", security: admin, parameters: [accountId],
      responses: { '200': answer('The keys', 'ApiKeyList'), ...withoutBody, '404': accountNotFound },
    },
    post: {
      summary: 'Create an API key for the account; the key is shown once', security: admin, parameters: [accountId], requestBody: body('ApiKeyRequest'),
      responses: {
        '201': answer('The key', 'ApiKeyCreated'), ...refusals, '400': errorAnswer(`invalid_scope (unknown or repeated), invalid_request, ${BODY_400}, ${CREDENTIAL_400}`), '404': accountNotFound,
        '409': errorAnswer(KEY_LIMIT),
      },
    },
  },
  '/admin/v1/accounts/{accountId}/credits': {
    post: {
      summary: 'Credit a pool of the account, idempotent by reference', security: admin, parameters: [accountId], requestBody: body('CreditRequest'),
      responses: { '200': answer('The credit and the balance after it', 'Credit'), ...refusals, '404': accountNotFound, '409': errorAnswer('credit_reference_reused: the reference was applied before with another amount; nothing moved') },
    },
  },
  '/admin/v1/accounts/{accountId}/orders': {
    post: {
      summary: 'A top-up order made by an operator: paid and fulfilled like the owner’s own', security: admin, parameters: [accountId, orderIdempotencyKey],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/OrderRequest' } } } },
      responses: { '201': answer('The order, status created; header x-payg-replayed: true when the Idempotency-Key named an existing order', 'Order'), ...refusals, '400': errorAnswer(`invalid_request, idempotency_key_invalid, ${BODY_400}, ${CREDENTIAL_400}`), '404': accountNotFound, '409': errorAnswer('idempotency_key_reused') },
    },
  },
  '/admin/v1/api-keys/{apiKeyId}': {
    delete: {
      summary: 'Revoke a key: every gateway instance refuses it (401) within one second; a repeat changes nothing', security: admin, parameters: [apiKeyId], requestBody: emptyBody,
      responses: { '204': { description: 'Revoked' }, ...refusals, '404': keyNotFound },
    },
    patch: {
      summary: "Set the key's own limits (the account's apply too); every instance applies them within a second", security: admin, parameters: [apiKeyId], requestBody: body('LimitsRequest'),
      responses: { '200': answer('The key with its limits', 'ApiKey'), ...refusals, '404': keyNotFound, '409': errorAnswer('api_key_inactive: the key is revoked or expired (a key in its rotation grace still takes limits); nothing changed') },
    },
  },
  '/admin/v1/api-keys/{apiKeyId}/rotate': {
    post: {
      summary: "A new key with the old one's account, name, scopes and expiry; the old key keeps working for the grace, then is refused", security: admin, parameters: [apiKeyId], requestBody: optionalBody('RotateRequest'),
      responses: { '201': answer('The new key, shown this once', 'ApiKeyRotated'), ...refusals, '404': keyNotFound, '409': errorAnswer(`api_key_inactive: the key is revoked or expired; or ${KEY_LIMIT}`) },
    },
  },
  '/admin/v1/audit': {
    get: {
      summary: 'The operator audit log, newest first: who (the operator credential\'s id), what, when, the request id; never a secret', security: admin,
      description: `Filters combine (all hold). A page is found by scanning the log newest first from \`before\`, keeping the entries that pass, until \`limit\` are kept or ${MAX_JOURNAL_SCAN} entries were looked at; \`next\` is where the scan stopped, so a filtered page may hold fewer than \`limit\` entries, even none, and the pages never skip or repeat an entry.`,
      parameters: [
        ...paging,
        query('accountId', { type: 'string', minLength: 1, maxLength: 200 }, 'Only actions on this account'),
        query('action', { type: 'string', pattern: `^(${ACTION_NAME})(,(${ACTION_NAME}))*$` }, `Only these actions: one, or several separated by commas, of ${AUDIT_ACTIONS.join(', ')}; an unknown one is 400 naming it`),
        query('from', { type: 'string', format: 'date-time' }, "RFC 3339 with a time zone: entries whose `at` is at or after it"),
        query('to', { type: 'string', format: 'date-time' }, 'RFC 3339 with a time zone: entries whose `at` is before it; before `from` is 400'),
      ],
      responses: { '200': answer('A page of the log', 'AuditList'), ...withoutBody },
    },
  },
  '/admin/v1/reconciliation': {
    get: { summary: "Every ledger account's balance recomputed from its bill rows against its FundsHold actor", security: admin, responses: { '200': answer('The differences, each naming the events the ledger lacks', 'Reconciliation'), ...withoutBody } },
  },
  '/admin/v1/reconciliation/repair': {
    post: { summary: "The differing accounts' actors deliver their missing events to the ledger (idempotent by event id)", security: admin, requestBody: emptyBody, responses: { '200': answer('What was delivered, and the reconciliation after', 'Repair'), ...refusals } },
  },
};
