// Text content as both wires write it: a string, or a list of `{ type: "text", text }`
// (OpenAI calls them parts, Anthropic blocks). Anything else in a list, and any other field
// set on a text item (Anthropic's cache_control and citations), has no exact counterpart.

import { inexact } from './errors';

export interface TextBlock {
  type: 'text';
  text: string;
}

/** Present with a value: both wires read null as "not set". */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** An object whose only field is `type`, of that value: `{ "type": "text" }`, `{ "type": "disabled" }`. */
export function onlyType(value: unknown, type: string): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value).filter(([, field]) => isSet(field));
  return entries.length === 1 && entries[0][0] === 'type' && entries[0][1] === type;
}

/**
 * temperature and top_p: both wires read a number the same way only between 0 and 1.
 * `range` names whose limits the message cites.
 */
export function unitInterval(key: string, value: unknown, range = 'the range'): number {
  if (typeof value !== 'number' || value < 0 || value > 1) return inexact(key, `${key} ${JSON.stringify(value)} is outside ${range} of 0 to 1`);
  return value;
}

/** The content's text items; a string is one. `at` names the content's owner, `other` the wire translated to. */
export function textBlocks(content: unknown, at: string, other: string): TextBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return inexact(`${at}.content`, `${at}.content is neither text nor a list of text`);
  return content.map((item, j) => textBlock(item, `${at}.content[${j}]`, other));
}

export function textBlock(item: unknown, at: string, other: string): TextBlock {
  const fields = typeof item === 'object' && item !== null && !Array.isArray(item) ? (item as Record<string, unknown>) : undefined;
  if (fields?.type !== 'text' || typeof fields.text !== 'string') {
    const kind = typeof fields?.type === 'string' ? `a ${fields.type} item` : 'not a text item';
    return inexact(at, `${at} is ${kind}, which ${other} cannot be given exactly`);
  }
  for (const [key, value] of Object.entries(fields)) {
    if (key !== 'type' && key !== 'text' && isSet(value)) inexact(`${at}.${key}`, `${at}.${key} has no exact ${other} equivalent`);
  }
  return { type: 'text', text: fields.text };
}
