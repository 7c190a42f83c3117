import { randomUUID } from 'node:crypto';
import { isCanonicalUuid } from './uuid';

describe('canonical UUID', () => {
  it('when a UUID is lowercase 8-4-4-4-12 hex and nothing else, then it is canonical', () => {
    expect(isCanonicalUuid(randomUUID())).toBe(true);
    for (const value of [randomUUID().toUpperCase(), `"${randomUUID()}"`, ` ${randomUUID()}`, `${randomUUID()}\n`, randomUUID().replaceAll('-', ''), '']) {
      expect(isCanonicalUuid(value)).toBe(false);
    }
  });
});
