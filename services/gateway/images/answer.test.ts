// A task's answers: its image, or the error the responder says (status, headers, body as JSON
// text: the order of the fields is pinned too), as they were before the use case threw them.

import type { ImageTaskView } from '../../../actors/image-task/ImageTaskInterface';
import { errorAnswer, type ErrorAnswer } from '../../../lib/error-responder';
import type { GatewayError } from '../../../lib/errors';
import { PLATFORM_CREDENTIALS_REFUSED } from '../../../providers/port';
import { reply } from './answer';

describe('image task answers', () => {
  const view = {
    taskId: '0b8a4b44-5cbf-8e0c-9c39-35c5e1c0a001', status: 'failed', phase: 'failed', model: 'sim-image', charged: 0, failure: 'no',
    deadlineAt: Date.UTC(2026, 0, 2, 3, 4, 5),
  } as unknown as ImageTaskView;
  // The use case answers an image, and throws any other outcome for the responder to say.
  const answer = (task: Partial<ImageTaskView>): Omit<ErrorAnswer, 'body'> & { body: unknown } => {
    try {
      return { status: 200, ...reply({ ...view, ...task } as ImageTaskView) };
    } catch (error) {
      return errorAnswer('native', error as GatewayError, 'req-9');
    }
  };

  it('failed, unknown, unresolved and succeeded', () => {
    const asText = (answers: Record<string, { status: number; headers: Record<string, string>; body: unknown }>) =>
      Object.fromEntries(Object.entries(answers).map(([name, a]) => [name, { status: a.status, headers: a.headers, body: JSON.stringify(a.body) }]));
    expect(asText({
      failed: answer({}),
      unknown: answer({ status: 'unknown', phase: 'unknown' } as Partial<ImageTaskView>),
      unresolved: answer({ status: 'unresolved', phase: 'running' } as Partial<ImageTaskView>),
      succeeded: answer({ status: 'succeeded', phase: 'succeeded', charged: 40_000_000, artifact: { created: 1, url: 'http://i/1.png' } } as Partial<ImageTaskView>),
      lateArtifact: answer({ status: 'unknown', phase: 'unknown', artifact: { created: 2, b64Json: 'AA==', revisedPrompt: 'p' } } as Partial<ImageTaskView>),
    })).toMatchSnapshot();
  });

  it('when the task failed because the provider refused the platform\'s credentials, then 502 provider_error, not the customer\'s 400', () => {
    const failed = answer({ failure: PLATFORM_CREDENTIALS_REFUSED });
    expect([failed.status, (failed.body as { error: { code: string; message: string } }).error]).toEqual([
      502, expect.objectContaining({ code: 'provider_error', message: "the provider refused the platform's credentials; nothing was produced and the hold was released" }),
    ]);
    expect(failed.body).toMatchObject({ taskId: view.taskId, status: 'failed' });
  });
});
