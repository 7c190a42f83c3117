import { isOrderId, orderIdFor, parseCallbackBody, parseOrderBody } from './request';

const KEY = '0f8c2d3e-4a5b-46c7-980a-1b2c3d4e5f60';

describe('order ids', () => {
  it('when no Idempotency-Key is given, then every order gets a new well-formed id', () => {
    const ids = new Set(Array.from({ length: 50 }, () => orderIdFor('acct_1', 'key_1')));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(isOrderId(id)).toBe(true);
  });
  it('when the same key is used in the same scope, then the same id; in another scope or account, another', () => {
    const id = orderIdFor('acct_1', 'key_1', KEY);
    expect(isOrderId(id)).toBe(true);
    expect(orderIdFor('acct_1', 'key_1', KEY)).toBe(id);
    expect(orderIdFor('acct_1', 'key_2', KEY)).not.toBe(id);
    expect(orderIdFor('acct_1', 'operator', KEY)).not.toBe(id);
    expect(orderIdFor('acct_2', 'key_1', KEY)).not.toBe(id);
  });
  it.each(['', 'ord_', 'ord_0F8C2D3E4A5B46C7980A1B2C3D4E5F60', 'ord_0f8c2d3e4a5b46c7980a1b2c3d4e5f6', `ord_${'a'.repeat(33)}`, '../ord_x', KEY])('when the id is %p, then it is not an order id', (id) => {
    expect(isOrderId(id)).toBe(false);
  });
});

describe('order and callback bodies', () => {
  it('when the amount is an integer from 1 to 10,000 USD, then it is accepted; anything else is refused naming amount', () => {
    expect(parseOrderBody({ amount: 1 })).toEqual({ amount: 1 });
    expect(parseOrderBody({ amount: 10_000_000_000_000 })).toEqual({ amount: 10_000_000_000_000 });
    for (const amount of [0, -1, 0.5, 10_000_000_000_001, '5', null]) {
      expect(() => parseOrderBody({ amount })).toThrow(expect.objectContaining({ code: 'invalid_request', param: 'amount' }));
    }
    expect(() => parseOrderBody({ amount: 5, reference: 'x' })).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
  it('when a callback is well formed, then its event is read and other fields are ignored', () => {
    const event = { id: 'evt_1', type: 'payment.succeeded', orderId: 'ord_x', amount: 5, currency: 'USD', occurredAt: '2026-01-01T00:00:00+01:00', extra: { a: 1 } };
    expect(parseCallbackBody(Buffer.from(JSON.stringify(event)))).toEqual({ id: 'evt_1', type: 'payment.succeeded', orderId: 'ord_x', amount: 5, currency: 'USD', occurredAt: '2026-01-01T00:00:00+01:00' });
  });
  it('when a callback body is empty, not JSON or not an object, then 400 (invalid_request or invalid_json)', () => {
    expect(() => parseCallbackBody(undefined)).toThrow(expect.objectContaining({ code: 'invalid_request', status: 400 }));
    expect(() => parseCallbackBody(Buffer.from('{'))).toThrow(expect.objectContaining({ code: 'invalid_json', status: 400 }));
    expect(() => parseCallbackBody(Buffer.from('[]'))).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => parseCallbackBody(Buffer.from('{"id":"e","type":"payment.charged","orderId":"o","amount":1,"currency":"USD","occurredAt":"2026-01-01T00:00:00Z"}'))).toThrow(expect.objectContaining({ param: 'type' }));
  });
});
