import { unsupportedNodeMessage } from './node-version';

describe('unsupportedNodeMessage', () => {
  it('accepts Node 24 and newer', () => {
    expect(unsupportedNodeMessage('v24.0.0', '/x/node')).toBeUndefined();
    expect(unsupportedNodeMessage('v25.2.1', '/x/node')).toBeUndefined();
  });

  it('refuses older Node with the way out', () => {
    const message = unsupportedNodeMessage('v20.20.2', '/usr/bin/node');
    expect(message).toContain('needs Node.js 24 or newer; this is Node v20.20.2 (/usr/bin/node)');
    expect(message).toContain('npm start');
  });

  it('runs on Node 24 or newer itself (the npm scripts and Jest use node_modules/.bin/node)', () => {
    expect(unsupportedNodeMessage(process.version, process.execPath)).toBeUndefined();
  });
});
