// The canonical UUID form, defined once: Idempotency-Keys, image task ids, session ids and the
// catalog's profile ids are all lowercase 8-4-4-4-12 hex.

/** The hex digits of a canonical UUID, unanchored: for patterns that wrap it (a quoted header). */
export const CANONICAL_UUID_HEX = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

export const CANONICAL_UUID = new RegExp(`^${CANONICAL_UUID_HEX}$`);

/** Lowercase 8-4-4-4-12 hex, nothing around it. */
export function isCanonicalUuid(value: string): boolean {
  return CANONICAL_UUID.test(value);
}
