// The one refusal of a translation: the request uses something the other wire cannot say
// with the same meaning. The gateway answers it with 400 wire_translation_inexact, naming
// the offending field in `param`.

export class InexactTranslationError extends Error {
  /**
   * @param param the request field that cannot be translated exactly, as a path
   *   (`temperature`, `messages[2].content[0]`, `metadata.tags`).
   * @param message a clause saying why, e.g. "temperature 1.5 is above Anthropic's maximum of 1".
   */
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
    this.name = 'InexactTranslationError';
  }
}

export function inexact(param: string, message: string): never {
  throw new InexactTranslationError(param, message);
}
