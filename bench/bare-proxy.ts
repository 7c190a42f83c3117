// The bench's baseline: a bare pass-through proxy in Node (no auth, no billing, no logging) that
// forwards each request to the upstream over an undici Pool and streams the answer back. What the
// gateway adds beyond this is the cost of its own work, not of being a Node HTTP hop.
//   node dist/bench/bare-proxy.js <upstream origin>   → prints "listening <port>" on stdout

import '../lib/node-version'; // first: stops on Node older than 24 with the way out
import { createServer } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';

const pool = new Pool(process.argv[2], { connections: 64, keepAliveTimeout: 30_000 });
const server = createServer(async (req, res) => {
  try {
    const upstream = await pool.request({ method: req.method as 'POST', path: req.url ?? '/', headers: { 'content-type': req.headers['content-type'] ?? 'application/json' }, body: req });
    res.writeHead(upstream.statusCode, { 'content-type': String(upstream.headers['content-type'] ?? 'application/json') });
    await pipeline(upstream.body, res);
  } catch (error) {
    if (!res.headersSent) res.writeHead(502).end(String(error));
    else res.destroy();
  }
});
server.keepAliveTimeout = 65_000;
// Started by the bench with a pipe as stdin: when the bench goes, even killed, the pipe closes.
if (!process.stdin.isTTY) process.stdin.on('end', () => process.exit(0)).resume();
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening ${typeof address === 'object' && address ? address.port : 0}`);
});
