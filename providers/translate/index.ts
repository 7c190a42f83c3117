// Exact translation between the two chat wires, for a request on one wire served by a
// profile of the other (docs/providers.md). Requests: exact or refused. Answers: back into
// the request's wire, streams event by event, cancellation reaching the upstream.

export { InexactTranslationError } from './errors';
export { chatCallToMessagesCall } from './chat-call';
export { messagesEventsToChunks, messagesResultToCompletion } from './messages-answer';
export { messagesCallToChatCall } from './messages-call';
export { chunksToMessagesEvents, completionToMessagesResult } from './chat-answer';
