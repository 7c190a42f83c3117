// Every action the operator audit log records, by name: what `GET /admin/v1/audit?action=` takes,
// what the gateway's AuditLog requires of each entry it records, and the web console's filter.
// Imports nothing, so the console's bundle can take it too.
export const AUDIT_ACTIONS = [
  'account.create', 'account.credit', 'account.debit', 'account.limits', 'account.suspend', 'account.unsuspend',
  'api_key.create', 'api_key.limits', 'api_key.revoke', 'api_key.rotate',
  'order.create', 'reconciliation.repair',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
