import { codeOf } from '../../../test/support/errors';
import { isSessionId, parseSessionBody, resumeAfter, runCapabilities } from './request';

describe('session requests', () => {
  it('when the session body is absent or names a workspace, then the workspace is that or "default"', () => {
    expect(parseSessionBody(undefined)).toEqual({ workspace: 'default' });
    expect(parseSessionBody({})).toEqual({ workspace: 'default' });
    expect(parseSessionBody({ workspace: 'team-a_1' })).toEqual({ workspace: 'team-a_1' });
  });
  it('when the session body is not an object, has another field or a bad name, then 400 invalid_request', () => {
    for (const body of [null, [], 'x', 1, { workspace: '' }, { workspace: 'Caps' }, { workspace: '-x' }, { workspace: 'x'.repeat(65) }, { workspace: 1 }, { messages: [] }]) {
      expect(codeOf(() => parseSessionBody(body))).toBe('invalid_request');
    }
  });
  it('when an id is read, then only a canonical UUID is a session id', () => {
    expect(isSessionId('0f8fad5b-d9cb-469f-a165-70867728950e')).toBe(true);
    for (const id of ['0F8FAD5B-D9CB-469F-A165-70867728950E', 'x', '', '../admin']) expect(isSessionId(id)).toBe(false);
  });
  it('when a reader resumes, then the header wins over the query, and anything but a non-negative integer is 400', () => {
    expect(resumeAfter(undefined, undefined)).toEqual({ after: 0, param: 'last_event_id' });
    expect(resumeAfter('7', '3')).toEqual({ after: 7, param: 'Last-Event-ID' });
    expect(resumeAfter(undefined, '3')).toEqual({ after: 3, param: 'last_event_id' });
    for (const [header, query] of [['-1', undefined], ['1.5', undefined], ['abc', undefined], ['9'.repeat(16), undefined], [['1', '2'], undefined], [undefined, ['1', '2']], [undefined, 'x']] as const) {
      expect(codeOf(() => resumeAfter(header as string | string[] | undefined, query))).toBe('invalid_request');
    }
  });
  it('when a run asks for capabilities, then only agent_run is taken', () => {
    expect(runCapabilities(['agent_run'])).toEqual(['agent_run']);
    expect(codeOf(() => runCapabilities(['agent_run', 'signing']))).toBe('invalid_request');
  });
});
