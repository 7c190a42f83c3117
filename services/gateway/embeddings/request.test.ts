import { GatewayError } from '../../../lib/errors';
import { inputTokenBound, MAX_EMBEDDING_INPUTS, parseEmbeddingsBody } from './request';

/** The code and param a body is refused with. */
function refusal(body: unknown): { code: string; param: string | undefined } {
  try {
    parseEmbeddingsBody(body);
  } catch (error) {
    if (error instanceof GatewayError) return { code: error.code, param: error.param };
    throw error;
  }
  throw new Error('accepted');
}

describe('parseEmbeddingsBody', () => {
  it.each([
    ['a text', 'hello'],
    ['texts', ['hello', 'world']],
    ['token ids', [1, 2, 3]],
    ['arrays of token ids', [[1, 2], [3]]],
  ])('when the input is %s, then it is taken as given, float by default', (_what, input) => {
    expect(parseEmbeddingsBody({ model: 'm', input })).toEqual({ input, encodingFormat: 'float', passthrough: {} });
  });

  it('when encoding_format, dimensions and user are given, then the call carries them (user passed through)', () => {
    expect(parseEmbeddingsBody({ model: 'm', input: 'x', encoding_format: 'base64', dimensions: 4, user: 'u-1' }))
      .toEqual({ input: 'x', encodingFormat: 'base64', dimensions: 4, passthrough: { user: 'u-1' } });
  });

  it.each([
    ['no input', 'input', { model: 'm' }],
    ['an empty text', 'input', { model: 'm', input: '' }],
    ['an empty list', 'input', { model: 'm', input: [] }],
    ['an empty text in a list', 'input.1', { model: 'm', input: ['a', ''] }],
    ['a number among texts', 'input.1', { model: 'm', input: ['a', 3] }],
    ['a fractional token id', 'input.1', { model: 'm', input: [1, 2.5] }],
    ['a negative token id', 'input.1.0', { model: 'm', input: [[1], [-1]] }],
    ['an empty token array', 'input.1', { model: 'm', input: [[1], []] }],
    ['an object', 'input', { model: 'm', input: { text: 'x' } }],
    ['too many inputs', 'input', { model: 'm', input: Array.from({ length: MAX_EMBEDDING_INPUTS + 1 }, () => 'x') }],
    ['an unknown encoding', 'encoding_format', { model: 'm', input: 'x', encoding_format: 'int8' }],
    ['zero dimensions', 'dimensions', { model: 'm', input: 'x', dimensions: 0 }],
    ['quoted dimensions', 'dimensions', { model: 'm', input: 'x', dimensions: '4' }],
    ['a field the gateway does not send', 'stream', { model: 'm', input: 'x', stream: true }],
  ])('when the body has %s, then 400 invalid_request names %s', (_what, param, body) => {
    expect(refusal(body)).toEqual({ code: 'invalid_request', param });
  });

  it('when the body is not an object, then 400 invalid_request', () => {
    expect(refusal([1, 2]).code).toBe('invalid_request');
  });
});

describe('inputTokenBound', () => {
  it('when texts and token ids are bounded, then a text counts its UTF-8 bytes and a token array its length', () => {
    expect(inputTokenBound('héllo')).toBe(6);
    expect(inputTokenBound(['ab', '€'])).toBe(5);
    expect(inputTokenBound([7, 8, 9])).toBe(3);
    expect(inputTokenBound([[1, 2], [3]])).toBe(3);
  });
});
