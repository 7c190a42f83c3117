// The chat use case's input from an HTTP request whose credential and body middleware have run:
// shared by every route that serves a chat (open, member, compatibility, prototype sessions).

import type { Request, Response } from 'express';
import { GatewayError } from '../../../lib/errors';
import { parseSimDirectives } from '../../../providers/simulated/chat';
import { requestedCapabilities } from '../capabilities/gates';
import type { ChatInput } from '../chat/prepare';
import { clientGone } from './respond';

/** The simulated provider's directives (X-Sim-Directive, docs/simulated-provider.md), if any. */
export function directivesOf(req: Request) {
  const header = req.headers['x-sim-directive'];
  if (header === undefined) return undefined;
  try {
    return parseSimDirectives(Array.isArray(header) ? header.join(';') : header);
  } catch (error) {
    throw new GatewayError('invalid_request', (error as Error).message, { param: 'X-Sim-Directive' });
  }
}

/** `res` given: the call is stopped (and charged for what it produced) when the client leaves. */
export function chatInput(req: Request, modelId: string, pool: string, res?: Response): ChatInput {
  return {
    modelId,
    body: req.body,
    bodyBytes: req.bodyBytes,
    caller: req.caller,
    requestId: req.requestId,
    pool,
    directives: directivesOf(req),
    capabilities: requestedCapabilities(req.headers['x-payg-capabilities']),
    ...(res ? { signal: clientGone(res) } : {}),
  };
}
